/* The standard-library functions that can run long inside C, for states with an instruction
 * budget or a time limit (embed.c): Lua's count hook fires only between Lua instructions, so a
 * pattern like string.rep("a?", 30) .. string.rep("a", 30) kept string.find busy for minutes
 * under a 1 s limit (issue 30). These versions do what Lua 5.4's do (lstrlib.c's matcher and
 * ltablib.c's concat, rewritten here step for step) and charge their steps to the run
 * (the run's meter, embed.c's charge_steps: one step is one instruction of the budget, and the
 * clock is read every few thousand steps), so the run's limits stop them with the same error as a
 * Lua loop: string.find / match / gmatch / gsub  -- a step per pattern item tried, per byte a
 *                                           repetition scans and per byte a plain find compares
 *   string.rep                            -- a step per 64 bytes
 *   table.concat                          -- a step per element and per 64 bytes
 * (table.sort runs its comparisons in Lua when it is given a function, where the hook fires.) */
#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>
#include <string.h>

#include "embed_internal.h"

enum { CHARGE_EVERY = 1 << 14 };

typedef struct counter {
    lua_State *L;
    size_t steps; /* since the last charge */
} counter;

/* The run's meter (embed.c hands it over when it installs these functions), kept in the
 * registry under this key as a userdata holding the function. */
static const char METER = 'M';

static void meter(lua_State *L, size_t n)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &METER);
    ckt_embed_meter *m = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (m) (*m)(L, n);
}

static void charge(counter *c, size_t n)
{
    c->steps += n;
    if (c->steps >= CHARGE_EVERY) {
        size_t s = c->steps;
        c->steps = 0;
        meter(c->L, s);
    }
}

static void charge_rest(counter *c)
{
    size_t s = c->steps;
    c->steps = 0;
    if (s) meter(c->L, s);
}

/* ---- the matcher (Lua 5.4 lstrlib.c) ---- */

#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)
#define L_ESC '%'
#define SPECIALS "^$*+?.([%-"
#define MAXCCALLS 200
#define MAXCAPTURES 32
#define uchar(c) ((unsigned char)(c))

typedef struct MatchState {
    const char *src_init, *src_end, *p_end;
    lua_State *L;
    counter c;
    int matchdepth;
    unsigned char level;
    struct {
        const char *init;
        ptrdiff_t len;
    } capture[MAXCAPTURES];
} MatchState;

static const char *match(MatchState *ms, const char *s, const char *p);

static int check_capture(MatchState *ms, int l)
{
    l -= '1';
    if (l < 0 || l >= ms->level || ms->capture[l].len == CAP_UNFINISHED)
        return luaL_error(ms->L, "invalid capture index %%%d", l + 1);
    return l;
}

static int capture_to_close(MatchState *ms)
{
    int level = ms->level;
    for (level--; level >= 0; level--)
        if (ms->capture[level].len == CAP_UNFINISHED) return level;
    return luaL_error(ms->L, "invalid pattern capture");
}

static const char *classEnd(MatchState *ms, const char *p)
{
    switch (*p++) {
    case L_ESC:
        if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^') p++;
        do { /* look for a ']' */
            if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
            if (*(p++) == L_ESC && p < ms->p_end) p++; /* skip escapes (e.g. '%]') */
        } while (*p != ']');
        return p + 1;
    default: return p;
    }
}

static int match_class(int c, int cl)
{
    int res;
    switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    default: return cl == c;
    }
    if (isupper(cl)) res = !res;
    return res;
}

static int matchbracketclass(int c, const char *p, const char *ec)
{
    int sig = 1;
    if (*(p + 1) == '^') {
        sig = 0;
        p++; /* skip the '^' */
    }
    while (++p < ec) {
        if (*p == L_ESC) {
            p++;
            if (match_class(c, uchar(*p))) return sig;
        } else if (*(p + 1) == '-' && p + 2 < ec) {
            p += 2;
            if (uchar(*(p - 2)) <= c && c <= uchar(*p)) return sig;
        } else if (uchar(*p) == c)
            return sig;
    }
    return !sig;
}

static int singlematch(MatchState *ms, const char *s, const char *p, const char *ep)
{
    if (s >= ms->src_end) return 0;
    int c = uchar(*s);
    switch (*p) {
    case '.': return 1; /* matches any char */
    case L_ESC: return match_class(c, uchar(*(p + 1)));
    case '[': return matchbracketclass(c, p, ep - 1);
    default: return uchar(*p) == c;
    }
}

static const char *matchbalance(MatchState *ms, const char *s, const char *p)
{
    if (p >= ms->p_end - 1) luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
    if (*s != *p) return NULL;
    int b = *p, e = *(p + 1), cont = 1;
    const char *from = s;
    while (++s < ms->src_end) {
        if (*s == e) {
            if (--cont == 0) {
                charge(&ms->c, (size_t)(s - from));
                return s + 1;
            }
        } else if (*s == b)
            cont++;
    }
    charge(&ms->c, (size_t)(s - from));
    return NULL;
}

static const char *max_expand(MatchState *ms, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0; /* counts maximum expand for item */
    while (singlematch(ms, s + i, p, ep)) i++;
    charge(&ms->c, (size_t)i);
    /* keeps trying to match with the maximum repetitions */
    while (i >= 0) {
        const char *res = match(ms, s + i, ep + 1);
        if (res) return res;
        i--; /* else didn't match; reduce 1 repetition to try again */
    }
    return NULL;
}

static const char *min_expand(MatchState *ms, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *res = match(ms, s, ep + 1);
        if (res != NULL) return res;
        if (singlematch(ms, s, p, ep))
            s++; /* try with one more repetition */
        else
            return NULL;
    }
}

static const char *start_capture(MatchState *ms, const char *s, const char *p, int what)
{
    int level = ms->level;
    if (level >= MAXCAPTURES) luaL_error(ms->L, "too many captures");
    ms->capture[level].init = s;
    ms->capture[level].len = what;
    ms->level = (unsigned char)(level + 1);
    const char *res = match(ms, s, p);
    if (res == NULL) ms->level--; /* undo capture */
    return res;
}

static const char *end_capture(MatchState *ms, const char *s, const char *p)
{
    int l = capture_to_close(ms);
    ms->capture[l].len = s - ms->capture[l].init; /* close capture */
    const char *res = match(ms, s, p);
    if (res == NULL) ms->capture[l].len = CAP_UNFINISHED; /* undo capture */
    return res;
}

static const char *match_capture(MatchState *ms, const char *s, int l)
{
    l = check_capture(ms, l);
    size_t len = (size_t)ms->capture[l].len;
    charge(&ms->c, len);
    if ((size_t)(ms->src_end - s) >= len && memcmp(ms->capture[l].init, s, len) == 0)
        return s + len;
    return NULL;
}

static const char *match(MatchState *ms, const char *s, const char *p)
{
    if (ms->matchdepth-- == 0) luaL_error(ms->L, "pattern too complex");
init: /* using goto to optimize tail recursion */
    charge(&ms->c, 1);
    if (p != ms->p_end) {
        switch (*p) {
        case '(':
            if (*(p + 1) == ')') /* position capture? */
                s = start_capture(ms, s, p + 2, CAP_POSITION);
            else
                s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
            break;
        case ')': s = end_capture(ms, s, p + 1); break;
        case '$':
            if ((p + 1) != ms->p_end) goto dflt; /* not the last pattern item */
            s = (s == ms->src_end) ? s : NULL;   /* check end of string */
            break;
        case L_ESC:
            switch (*(p + 1)) {
            case 'b': /* balanced string */
                s = matchbalance(ms, s, p + 2);
                if (s != NULL) {
                    p += 4;
                    goto init;
                }
                break;
            case 'f': { /* frontier */
                p += 2;
                if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
                const char *ep = classEnd(ms, p);
                char previous = (s == ms->src_init) ? '\0' : *(s - 1);
                if (!matchbracketclass(uchar(previous), p, ep - 1) &&
                    matchbracketclass(uchar(*s), p, ep - 1)) {
                    p = ep;
                    goto init;
                }
                s = NULL;
                break;
            }
            case '0':
            case '1':
            case '2':
            case '3':
            case '4':
            case '5':
            case '6':
            case '7':
            case '8':
            case '9': /* capture results (%0-%9) */
                s = match_capture(ms, s, uchar(*(p + 1)));
                if (s != NULL) {
                    p += 2;
                    goto init;
                }
                break;
            default: goto dflt;
            }
            break;
        default:
        dflt : {
            const char *ep = classEnd(ms, p); /* points to optional suffix */
            if (!singlematch(ms, s, p, ep)) {
                if (*ep == '*' || *ep == '?' || *ep == '-') { /* accept empty? */
                    p = ep + 1;
                    goto init;
                }
                s = NULL; /* fail */
            } else {      /* matched once */
                switch (*ep) {
                case '?': {
                    const char *res = match(ms, s + 1, ep + 1);
                    if (res != NULL)
                        s = res;
                    else {
                        p = ep + 1;
                        goto init;
                    }
                    break;
                }
                case '+': s = max_expand(ms, s + 1, p, ep); break;
                case '*': s = max_expand(ms, s, p, ep); break;
                case '-': s = min_expand(ms, s, p, ep); break;
                default:
                    s++;
                    p = ep;
                    goto init;
                }
            }
            break;
        }
        }
    }
    ms->matchdepth++;
    return s;
}

static ptrdiff_t get_onecapture(MatchState *ms, int i, const char *s, const char *e,
                                const char **cap)
{
    if (i >= ms->level) {
        if (i != 0) luaL_error(ms->L, "invalid capture index %%%d", i + 1);
        *cap = s;
        return e - s;
    }
    ptrdiff_t capl = ms->capture[i].len;
    *cap = ms->capture[i].init;
    if (capl == CAP_UNFINISHED)
        luaL_error(ms->L, "unfinished capture");
    else if (capl == CAP_POSITION)
        lua_pushinteger(ms->L, (ms->capture[i].init - ms->src_init) + 1);
    return capl;
}

static void push_onecapture(MatchState *ms, int i, const char *s, const char *e)
{
    const char *cap;
    ptrdiff_t l = get_onecapture(ms, i, s, e, &cap);
    if (l != CAP_POSITION) lua_pushlstring(ms->L, cap, (size_t)l);
}

static int push_captures(MatchState *ms, const char *s, const char *e)
{
    int nlevels = (ms->level == 0 && s) ? 1 : ms->level;
    luaL_checkstack(ms->L, nlevels, "too many captures");
    for (int i = 0; i < nlevels; i++) push_onecapture(ms, i, s, e);
    return nlevels;
}

static int nospecials(const char *p, size_t l)
{
    size_t upto = 0;
    do {
        if (strpbrk(p + upto, SPECIALS)) return 0;
        upto += strlen(p + upto) + 1; /* may have more after \0 */
    } while (upto <= l);
    return 1;
}

static void prepstate(MatchState *ms, lua_State *L, const char *s, size_t ls, const char *p,
                      size_t lp)
{
    ms->L = L;
    ms->c.L = L;
    ms->c.steps = 0;
    ms->matchdepth = MAXCCALLS;
    ms->src_init = s;
    ms->src_end = s + ls;
    ms->p_end = p + lp;
}

/* also after a match that an error left: the depth is whole again */
static void reprepstate(MatchState *ms)
{
    ms->level = 0;
    ms->matchdepth = MAXCCALLS;
}

static size_t posrelatI(lua_Integer pos, size_t len)
{
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

static const char *lmemfind(counter *c, const char *s1, size_t l1, const char *s2, size_t l2)
{
    if (l2 == 0) return s1;
    if (l2 > l1) return NULL;
    l2--;         /* 1st char is checked by memchr */
    l1 = l1 - l2; /* 's2' cannot be found after that */
    const char *init;
    while (l1 > 0 && (init = memchr(s1, *s2, l1)) != NULL) {
        init++; /* 1st char is already checked */
        charge(c, (size_t)(init - s1) + l2);
        if (memcmp(init, s2 + 1, l2) == 0) return init - 1;
        l1 -= (size_t)(init - s1);
        s1 = init;
    }
    return NULL;
}

static int str_find_aux(lua_State *L, int find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = posrelatI(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) { /* start after string's end? */
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || nospecials(p, lp))) {
        counter c = {L, 0};
        const char *s2 = lmemfind(&c, s + init, ls - init, p, lp);
        charge_rest(&c);
        if (s2) {
            lua_pushinteger(L, (s2 - s) + 1);
            lua_pushinteger(L, (lua_Integer)((size_t)(s2 - s) + lp));
            return 2;
        }
    } else {
        MatchState ms;
        const char *s1 = s + init;
        int anchor = (*p == '^');
        if (anchor) {
            p++;
            lp--; /* skip anchor character */
        }
        prepstate(&ms, L, s, ls, p, lp);
        do {
            reprepstate(&ms);
            const char *res = match(&ms, s1, p);
            if (res != NULL) {
                charge_rest(&ms.c);
                if (find) {
                    lua_pushinteger(L, (s1 - s) + 1); /* start */
                    lua_pushinteger(L, res - s);      /* end */
                    return push_captures(&ms, NULL, 0) + 2;
                }
                return push_captures(&ms, s1, res);
            }
        } while (s1++ < ms.src_end && !anchor);
        charge_rest(&ms.c);
    }
    luaL_pushfail(L);
    return 1;
}

static int str_find(lua_State *L) { return str_find_aux(L, 1); }
static int str_match(lua_State *L) { return str_find_aux(L, 0); }

typedef struct GMatchState {
    const char *src, *p, *lastmatch;
    MatchState ms;
} GMatchState;

static int gmatch_aux(lua_State *L)
{
    GMatchState *gm = lua_touserdata(L, lua_upvalueindex(3));
    gm->ms.L = L;
    gm->ms.c.L = L;
    for (const char *src = gm->src; src <= gm->ms.src_end; src++) {
        reprepstate(&gm->ms);
        const char *e = match(&gm->ms, src, gm->p);
        if (e != NULL && e != gm->lastmatch) {
            charge_rest(&gm->ms.c);
            gm->src = gm->lastmatch = e;
            return push_captures(&gm->ms, src, e);
        }
    }
    charge_rest(&gm->ms.c);
    return 0; /* not found */
}

static int gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = posrelatI(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2); /* keep strings on closure to avoid being collected */
    GMatchState *gm = lua_newuserdatauv(L, sizeof *gm, 0);
    if (init > ls) init = ls + 1; /* start after string's end */
    prepstate(&gm->ms, L, s, ls, p, lp);
    gm->src = s + init;
    gm->p = p;
    gm->lastmatch = NULL;
    lua_pushcclosure(L, gmatch_aux, 3);
    return 1;
}

static void add_s(MatchState *ms, luaL_Buffer *b, const char *s, const char *e)
{
    size_t l;
    lua_State *L = ms->L;
    const char *news = lua_tolstring(L, 3, &l);
    const char *p;
    charge(&ms->c, l);
    while ((p = memchr(news, L_ESC, l)) != NULL) {
        luaL_addlstring(b, news, (size_t)(p - news));
        p++; /* skip ESC */
        if (*p == L_ESC)
            luaL_addchar(b, *p);
        else if (*p == '0')
            luaL_addlstring(b, s, (size_t)(e - s));
        else if (isdigit(uchar(*p))) {
            const char *cap;
            ptrdiff_t resl = get_onecapture(ms, *p - '1', s, e, &cap);
            if (resl == CAP_POSITION)
                luaL_addvalue(b);
            else
                luaL_addlstring(b, cap, (size_t)resl);
        } else
            luaL_error(L, "invalid use of '%c' in replacement string", L_ESC);
        l -= (size_t)(p + 1 - news);
        news = p + 1;
    }
    luaL_addlstring(b, news, l);
}

static int add_value(MatchState *ms, luaL_Buffer *b, const char *s, const char *e, int tr)
{
    lua_State *L = ms->L;
    switch (tr) {
    case LUA_TFUNCTION: {
        lua_pushvalue(L, 3);
        int n = push_captures(ms, s, e);
        lua_call(L, n, 1);
        break;
    }
    case LUA_TTABLE:
        push_onecapture(ms, 0, s, e);
        lua_gettable(L, 3);
        break;
    default: add_s(ms, b, s, e); return 1;
    }
    if (!lua_toboolean(L, -1)) { /* nil or false? */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s)); /* keep original text */
        return 0;
    }
    if (!lua_isstring(L, -1))
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b); /* add result to accumulator */
    return 1;
}

static int str_gsub(lua_State *L)
{
    size_t srcl, lp;
    const char *src = luaL_checklstring(L, 1, &srcl);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *lastmatch = NULL;
    int tr = lua_type(L, 3);
    lua_Integer max_s = luaL_optinteger(L, 4, (lua_Integer)srcl + 1);
    int anchor = (*p == '^');
    lua_Integer n = 0;
    int changed = 0;
    MatchState ms;
    luaL_Buffer b;
    luaL_argexpected(
        L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
        "string/function/table");
    luaL_buffinit(L, &b);
    if (anchor) {
        p++;
        lp--; /* skip anchor character */
    }
    prepstate(&ms, L, src, srcl, p, lp);
    while (n < max_s) {
        reprepstate(&ms);
        const char *e = match(&ms, src, p);
        if (e != NULL && e != lastmatch) { /* match? */
            n++;
            changed = add_value(&ms, &b, src, e, tr) | changed;
            src = lastmatch = e;
        } else if (src < ms.src_end) /* otherwise, skip one character */
            luaL_addchar(&b, *src++);
        else
            break; /* end of subject */
        if (anchor) break;
    }
    charge_rest(&ms.c);
    if (!changed) /* no changes? */
        lua_pushvalue(L, 1);
    else {
        luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

/* ---- string.rep: Lua's loops n times even when the result is empty (rep("", 2^62)) ---- */

static int str_rep(lua_State *L)
{
    size_t l, lsep;
    const char *s = luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *sep = luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) { /* nothing to copy, however many times */
        lua_pushliteral(L, "");
        return 1;
    }
    if (l + lsep < l || l + lsep > (size_t)LUA_MAXINTEGER / (size_t)n)
        return luaL_error(L, "resulting string too large");
    size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, total); /* the memory cap answers here */
    /* n - 1 copies of s and sep, by doubling what is written (a few memcpy calls, not n), then s */
    size_t unit = l + lsep, body = (size_t)(n - 1) * unit;
    if (body) {
        memcpy(p, s, l);
        memcpy(p + l, sep, lsep);
        for (size_t filled = unit; filled < body;) {
            size_t k = filled < body - filled ? filled : body - filled;
            memcpy(p + filled, p, k);
            filled += k;
            meter(L, k / 64);
        }
    }
    memcpy(p + body, s, l);
    luaL_pushresultsize(&b, total);
    return 1;
}

/* ---- table.concat (ltablib.c): each element may come from an __index written in C ---- */

static int tconcat(lua_State *L)
{
    luaL_Buffer b;
    /* ltablib's checktab: a table, or something with __index and __len */
    if (lua_type(L, 1) != LUA_TTABLE) {
        int ok = 0;
        int top = lua_gettop(L);
        if (lua_getmetatable(L, 1))
            ok = lua_getfield(L, -1, "__index") != LUA_TNIL &&
                 lua_getfield(L, -2, "__len") != LUA_TNIL;
        lua_settop(L, top);
        if (!ok) luaL_checktype(L, 1, LUA_TTABLE);
    }
    lua_Integer last = luaL_len(L, 1);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    last = luaL_optinteger(L, 4, last);
    counter c = {L, 0};
    luaL_buffinit(L, &b);
    for (; i < last; i++) {
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (at index %I) in table for 'concat'", i);
        size_t len;
        lua_tolstring(L, -1, &len);
        luaL_addvalue(&b);
        luaL_addlstring(&b, sep, lsep);
        charge(&c, 1 + (len + lsep) / 64);
    }
    if (i == last) { /* add last value (if interval was not empty) */
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (at index %I) in table for 'concat'", i);
        luaL_addvalue(&b);
    }
    charge_rest(&c);
    luaL_pushresult(&b);
    return 1;
}

static void set(lua_State *L, const char *table, const char *name, lua_CFunction f)
{
    if (lua_getglobal(L, table) == LUA_TTABLE) {
        lua_pushcfunction(L, f);
        lua_setfield(L, -2, name);
    }
    lua_pop(L, 1);
}

void ckt_embed_limit_libraries(lua_State *L, ckt_embed_meter charge_steps)
{
    ckt_embed_meter *m = lua_newuserdatauv(L, sizeof *m, 0);
    *m = charge_steps;
    lua_rawsetp(L, LUA_REGISTRYINDEX, &METER);
    /* the string metatable's __index is this same table: s:find(...) gets them too */
    set(L, "string", "find", str_find);
    set(L, "string", "match", str_match);
    set(L, "string", "gmatch", gmatch);
    set(L, "string", "gsub", str_gsub);
    set(L, "string", "rep", str_rep);
    set(L, "table", "concat", tconcat);
}
