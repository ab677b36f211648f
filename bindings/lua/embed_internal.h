/* Between embed.c and embed_limits.c (not installed). */
#ifndef CKT_EMBED_INTERNAL_H
#define CKT_EMBED_INTERNAL_H

#include <lua.h>
#include <stddef.h>

/* A run's meter (embed.c: ckt_embed_charge): count n steps of work done inside C as n
 * instructions of the run, and raise the run's limit error (as the count hook does) when the
 * budget or the time is spent. */
typedef void (*ckt_embed_meter)(lua_State *L, size_t n);
/* Replace string.find/match/gmatch/gsub/rep and table.concat with versions that charge their
 * steps to the meter (embed_limits.c; embed.c calls it, and the meter is how the steps come
 * back: embed_limits.c calls nothing of embed.c's by name). */
void ckt_embed_limit_libraries(lua_State *L, ckt_embed_meter charge);

#endif
