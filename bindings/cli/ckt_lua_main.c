/* ckt-lua: run ckt scripts, or explore interactively.
 * Conventions of the standard `lua` program: script args in `arg`, -e, -l [g=]mod, -i, -v, -E,
 * -W, -, plus -h/--help and --target NAME (the default compile target). `ckt` is a preloaded
 * global. The manual page is ckt-lua.1 next to this file. */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckt/target.h"
#include "ckt_lua.h"
#include "l_internal.h"

#ifdef CKT_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

static const char *progname = "ckt-lua";
static lua_State *global_L = NULL;
static volatile sig_atomic_t in_call = 0;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [options] [script [args]]\n"
            "Available options are:\n"
            "  -e stat        execute string 'stat'\n"
            "  -i             enter interactive mode after executing 'script'\n"
            "  -l mod         require library 'mod' into global 'mod'\n"
            "  -l g=mod       require library 'mod' into global 'g'\n"
            "  -v             show version information\n"
            "  -E             ignore environment variables (LUA_PATH, LUA_CPATH, CKT_PATH)\n"
            "  -W             turn warnings on\n"
            "  -h, --help     show this help\n"
            "  --target NAME  default compile target: cpu, %s\n"
            "  --precompile TARGET... [--only NAME,...]\n"
            "                 compile the kernel library's default configurations for the\n"
            "                 targets into the compile cache ($CKT_CACHE_DIR), print a table\n"
            "  --             stop handling options\n"
            "  -              stop handling options and execute stdin\n"
            "With no script and no -e, an interactive session starts (help() inside it).\n"
            "See ckt-lua(1).\n",
            progname, ckt_target_names());
}

static void print_version(void) { printf("ckt %s (%s)\n", ckt_version(), LUA_RELEASE); }

/* Ctrl-C during a running statement: stop it at the next instruction (as lua.c does). */
static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
    (void)sig;
    if (in_call && global_L) {
        lua_sethook(global_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
        return;
    }
#ifdef CKT_HAVE_READLINE
    /* at the prompt: drop the line being typed and show a fresh prompt */
    if (write(STDOUT_FILENO, "\n", 1) < 0) return;
    rl_on_new_line();
    rl_replace_line("", 0);
    rl_redisplay();
#endif
}

static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static int docall(lua_State *L, int narg, int nres)
{
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    in_call = 1;
    int status = lua_pcall(L, narg, nres, base);
    in_call = 0;
    lua_sethook(L, NULL, 0, 0);
    lua_remove(L, base);
    return status;
}

static int report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
        fflush(stderr);
        lua_pop(L, 1);
    }
    return status;
}

static int dochunk(lua_State *L, int status)
{
    if (status == LUA_OK) status = docall(L, 0, 0);
    return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name)
{
    return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* --precompile TARGET... [--only NAME,...]: the arguments after --precompile (argv[0..argc)),
 * checked before the state opens; *only: the --only list or NULL. 0 when they are usable. */
static int precompile_args(int argc, char **argv, int *ntargets, const char **only)
{
    *ntargets = 0;
    *only = NULL;
    while (*ntargets < argc && argv[*ntargets][0] != '-') {
        ckt_error err;
        if (ckt_lua_check_target(argv[*ntargets], &err)) {
            fprintf(stderr, "%s: --precompile: target '%s' is not supported: %s\n", progname,
                    argv[*ntargets], err.msg);
            return 1;
        }
        (*ntargets)++;
    }
    int i = *ntargets;
    if (i + 1 < argc && strcmp(argv[i], "--only") == 0) *only = argv[i + 1], i += 2;
    if (*ntargets == 0 || i < argc) {
        fprintf(stderr,
                "%s: --precompile %s (usage: --precompile TARGET... [--only NAME,...], e.g. "
                "--precompile sm_90 sm_90a gfx90a cpu)\n",
                progname, *ntargets == 0 ? "needs at least one target" : "takes targets only");
        return 1;
    }
    return 0;
}

/* Run ckt.kernels.precompile.main(targets, only) (its table on stdout); 0 when all compiled. */
static int precompile(lua_State *L, int ntargets, char **targets, const char *only)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, "ckt.kernels.precompile");
    int status = docall(L, 1, 1);
    if (status == LUA_OK) {
        lua_getfield(L, -1, "main");
        lua_createtable(L, ntargets, 0);
        for (int i = 0; i < ntargets; i++) {
            lua_pushstring(L, targets[i]);
            lua_rawseti(L, -2, i + 1);
        }
        if (only) { /* "a,b,c" -> {"a", "b", "c"} */
            lua_newtable(L);
            for (int n = 1; *only; n++) {
                size_t len = strcspn(only, ",");
                lua_pushlstring(L, only, len);
                lua_rawseti(L, -2, n);
                only += len + (only[len] == ',');
            }
        } else
            lua_pushnil(L);
        in_call = 1;
        status = lua_pcall(L, 2, 1, 0); /* its errors are the user's: the message, no traceback */
        in_call = 0;
        if (status == LUA_OK && !lua_toboolean(L, -1)) return 1;
    }
    return report(L, status) != LUA_OK;
}

/* -l mod, or -l g=mod (Lua 5.4.4's form: the module into global g) */
static int dolibrary(lua_State *L, const char *spec)
{
    const char *eq = strchr(spec, '=');
    const char *mod = eq ? eq + 1 : spec;
    lua_getglobal(L, "require");
    lua_pushstring(L, mod);
    int status = docall(L, 1, 1);
    if (status == LUA_OK) {
        if (eq)
            lua_pushlstring(L, spec, (size_t)(eq - spec));
        else
            lua_pushstring(L, spec);
        lua_insert(L, -2);
        lua_setglobal(L, lua_tostring(L, -2));
        lua_pop(L, 1);
    }
    return report(L, status);
}

static int pushargs(lua_State *L)
{
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    int i;
    for (i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -i);
    return n;
}

static int handle_script(lua_State *L, char **argv)
{
    const char *fname = argv[0];
    if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL; /* stdin */
    if (fname && access(fname, R_OK) != 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", progname, fname, strerror(errno));
        return LUA_ERRFILE;
    }
    int status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
        int n = pushargs(L);
        status = docall(L, n, LUA_MULTRET);
    }
    return report(L, status);
}

static void createargtable(lua_State *L, char **argv, int argc, int script)
{
    if (script == argc) script = 0;
    int narg = argc - (script + 1);
    lua_createtable(L, narg, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

/* ---- the REPL ---- */

static const char *history_path(void)
{
    static char buf[4096];
    const char *e = getenv("CKT_HISTORY");
    if (e && *e) return e;
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state && *state)
        snprintf(buf, sizeof buf, "%s/ckt_history", state);
    else if (home && *home)
        snprintf(buf, sizeof buf, "%s/.ckt_history", home);
    else
        return NULL;
    return buf;
}

#ifdef CKT_HAVE_READLINE
/* Completion of globals, table fields (ckt.<TAB>) and methods (obj:<TAB>). */
static char **matches = NULL;
static int nmatches = 0, imatch = 0;

static void add_match(const char *prefix, const char *name, const char *sep)
{
    char **m = realloc(matches, sizeof(char *) * (size_t)(nmatches + 1));
    if (!m) return;
    matches = m;
    size_t n = strlen(prefix) + strlen(sep) + strlen(name) + 1;
    matches[nmatches] = malloc(n);
    if (matches[nmatches]) snprintf(matches[nmatches++], n, "%s%s%s", prefix, sep, name);
}

static void collect_keys(lua_State *L, int t, const char *prefix, const char *sep,
                         const char *start, int methods_only)
{
    size_t len = strlen(start);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -2);
            if (strncmp(k, start, len) == 0 && !(methods_only && (k[0] == '_' && k[1] == '_')))
                add_match(prefix, k, sep);
        }
        lua_pop(L, 1);
    }
}

static void compute_matches(const char *text)
{
    lua_State *L = global_L;
    for (int i = 0; i < nmatches; i++) free(matches[i]);
    free(matches);
    matches = NULL;
    nmatches = imatch = 0;
    const char *sep_pos = strrchr(text, '.'), *colon = strrchr(text, ':');
    if (colon && (!sep_pos || colon > sep_pos)) sep_pos = colon;
    int top = lua_gettop(L);
    if (!sep_pos) {
        lua_pushglobaltable(L);
        collect_keys(L, lua_gettop(L), "", "", text, 0);
        static const char *const kw[] = {"and",   "break", "do",       "else",  "elseif", "end",
                                         "false", "for",   "function", "goto",  "if",     "in",
                                         "local", "nil",   "not",      "or",    "repeat", "return",
                                         "then",  "true",  "until",    "while", NULL};
        for (const char *const *k = kw; *k; k++)
            if (strncmp(*k, text, strlen(text)) == 0) add_match("", *k, "");
    } else {
        /* evaluate the expression before the separator (a dotted name chain only: no calls) */
        size_t plen = (size_t)(sep_pos - text);
        char expr[256];
        if (plen >= sizeof expr) return;
        memcpy(expr, text, plen);
        expr[plen] = 0;
        for (size_t i = 0; i < plen; i++)
            if (!(expr[i] == '.' || expr[i] == '_' || (expr[i] >= 'a' && expr[i] <= 'z') ||
                  (expr[i] >= 'A' && expr[i] <= 'Z') || (expr[i] >= '0' && expr[i] <= '9')))
                return;
        lua_pushglobaltable(L);
        char *save, *part = strtok_r(expr, ".", &save);
        while (part) {
            if (!lua_istable(L, -1)) {
                lua_settop(L, top);
                return;
            }
            lua_getfield(L, -1, part);
            part = strtok_r(NULL, ".", &save);
        }
        char sep[2] = {*sep_pos, 0};
        char prefix[256];
        memcpy(prefix, text, plen);
        prefix[plen] = 0;
        if (lua_istable(L, -1))
            collect_keys(L, lua_gettop(L), prefix, sep, sep_pos + 1, *sep_pos == ':');
        if (lua_getmetatable(L, -1)) { /* methods through the metatable's __index */
            lua_getfield(L, -1, "__index");
            if (lua_istable(L, -1)) collect_keys(L, lua_gettop(L), prefix, sep, sep_pos + 1, 1);
        }
    }
    lua_settop(L, top);
}

static char *generator(const char *text, int state)
{
    if (state == 0) compute_matches(text);
    if (imatch < nmatches) return strdup(matches[imatch++]);
    return NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_completion_append_character = '\0';
    return rl_completion_matches(text, generator);
}
#endif

static char *read_line(const char *prompt)
{
#ifdef CKT_HAVE_READLINE
    if (isatty(STDIN_FILENO)) {
        char *l = readline(prompt);
        if (l && *l) add_history(l);
        return l;
    }
#endif
    fputs(prompt, stdout);
    fflush(stdout);
    char buf[8192];
    if (!fgets(buf, sizeof buf, stdin)) return NULL;
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') buf[n - 1] = 0;
    return strdup(buf);
}

static int incomplete(lua_State *L, int status)
{
    if (status == LUA_ERRSYNTAX) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        if (lmsg >= 5 && strcmp(msg + lmsg - 5, "<eof>") == 0) {
            lua_pop(L, 1);
            return 1;
        }
    }
    return 0;
}

/* Read a statement: try "return <line>" first so expressions print, then continue lines. */
static int load_statement(lua_State *L)
{
    char *line = read_line("> ");
    if (!line) return -1;
    const char *body = line[0] == '=' ? line + 1 : line;
    lua_pushfstring(L, "return %s;", body);
    int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
    lua_remove(L, -2);
    if (status == LUA_OK) {
        free(line);
        return LUA_OK;
    }
    lua_pop(L, 1);
    lua_pushstring(L, line);
    free(line);
    for (;;) {
        size_t len;
        const char *code = lua_tolstring(L, -1, &len);
        status = luaL_loadbuffer(L, code, len, "=stdin");
        if (!incomplete(L, status)) break;
        char *more = read_line(">> ");
        if (!more) {
            lua_pop(L, 1);
            return -1;
        }
        lua_pushfstring(L, "%s\n%s", code, more);
        free(more);
        lua_remove(L, -2);
    }
    lua_remove(L, -2); /* the source text */
    return status;
}

static void print_results(lua_State *L)
{
    int n = lua_gettop(L);
    if (n == 0) return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK)
        fprintf(stderr, "%s: error calling 'print' (%s)\n", progname, lua_tostring(L, -1));
}

static void repl(lua_State *L)
{
#ifndef CKT_HAVE_READLINE
    (void)history_path; /* no readline: no history file */
#else
    const char *hist = history_path();
    rl_readline_name = "ckt";
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
    rl_catch_signals = 0;
    if (hist) read_history(hist);
#endif
    if (isatty(STDIN_FILENO))
        printf("ckt %s — %s; help() for help, Ctrl-D to quit\n", ckt_version(), LUA_RELEASE);
    int status;
    while ((status = load_statement(L)) != -1) {
        if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK)
            print_results(L);
        else
            report(L, status);
        lua_settop(L, 0);
    }
    printf("\n");
#ifdef CKT_HAVE_READLINE
    if (hist) write_history(hist);
#endif
}

int main(int argc, char **argv)
{
    if (argv[0] && argv[0][0]) progname = argv[0];
    /* first pass: options up to the script (before the state exists: -E changes how it opens) */
    int script = 0, has_e = 0, has_i = 0, has_v = 0, has_E = 0, stdin_script = 0;
    int pre = 0, npre = 0; /* --precompile: its position, its targets */
    const char *pre_only = NULL;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            script = i;
            break;
        }
        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc) script = i + 1;
            break;
        }
        if (strcmp(a, "-") == 0) {
            script = i;
            stdin_script = 1;
            break;
        }
        if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: '%s' needs argument\n", progname, a);
                usage(stderr);
                return 1;
            }
            if (a[1] == 'e') has_e = 1;
            i++;
        } else if (strcmp(a, "--target") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: '--target' needs argument\n", progname);
                usage(stderr);
                return 1;
            }
            i++;
        } else if (strcmp(a, "--precompile") == 0) {
            if (precompile_args(argc - i - 1, argv + i + 1, &npre, &pre_only)) return 1;
            pre = i;
            break;
        } else if (strcmp(a, "-i") == 0) {
            has_i = has_v = 1;
        } else if (strcmp(a, "-v") == 0) {
            has_v = 1;
        } else if (strcmp(a, "-E") == 0) {
            has_E = 1;
        } else if (strcmp(a, "-W") == 0) {
            /* handled in order in the second pass */
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
            usage(stderr);
            return 1;
        }
    }
    (void)stdin_script;
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "%s: cannot create a Lua state: not enough memory\n", progname);
        return 1;
    }
    global_L = L;
    if (has_E) { /* as lua.c: the package library then ignores LUA_PATH and LUA_CPATH */
        lua_pushboolean(L, 1);
        lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
        unsetenv("CKT_PATH");
    }
    luaL_openlibs(L);
    ckt_lua_openlib(L);
    ckt_lua_add_path(L);
    lua_setglobal(L, "ckt");
    signal(SIGINT, on_sigint);
    if (has_v && !has_i) print_version();
    createargtable(L, argv, argc, script);

    /* second pass: run -e / -l / --target in order */
    int end = script ? script : pre ? pre : argc;
    for (i = 1; i < end; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-e") == 0) {
            if (dostring(L, argv[++i], "=(command line)") != LUA_OK) return 1;
        } else if (strcmp(a, "-l") == 0) {
            if (dolibrary(L, argv[++i]) != LUA_OK) return 1;
        } else if (strcmp(a, "-W") == 0) {
            lua_warning(L, "@on", 0);
        } else if (strcmp(a, "--target") == 0) {
            ckt_error err;
            const char *t = argv[++i];
            if (ckt_lua_check_target(t, &err) ||
                ckt_context_set_default_target(ckt_l_context(L), t, &err)) {
                fprintf(stderr, "%s: --target: %s\n", progname, err.msg);
                return 1;
            }
        }
    }
    if (pre) {
        int failed = precompile(L, npre, argv + pre + 1, pre_only);
        lua_close(L);
        return failed;
    }
    if (script && handle_script(L, argv + script) != LUA_OK) return 1;
    if (has_i || (!script && !has_e && !has_v)) {
        if (has_i) print_version();
        if (!script || has_i) repl(L);
    }
    lua_close(L);
    return 0;
}
