/* Between embed.c and embed_limits.c (not installed). */
#ifndef CKT_EMBED_INTERNAL_H
#define CKT_EMBED_INTERNAL_H

#include <lua.h>
#include <stddef.h>

/* A state opened by ckt_lua_open with an instruction budget or a time limit: count n steps of
 * work done inside C as n instructions of the run, and raise the run's limit error (as the count
 * hook does) when the budget or the time is spent. Any other state: nothing. */
void ckt_embed_charge(lua_State *L, size_t n);
/* Replace string.find/match/gmatch/gsub/rep and table.concat with versions that charge their
 * steps (embed_limits.c). */
void ckt_embed_limit_libraries(lua_State *L);

#endif
