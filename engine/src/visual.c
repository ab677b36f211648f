/* Text grids and SVG pictures of cell tables (see ckt/visual.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/visual.h"

/* A growable string; on allocation failure it stays failed and the caller reports it. */
typedef struct {
    char *p;
    size_t len, cap;
    int failed;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { b->failed = 1; return; }
        if (b->p && (size_t)n < room) { b->len += (size_t)n; return; }
        size_t ncap = (b->cap ? b->cap * 2 : 4096) + (size_t)n + 1;
        char *np = realloc(b->p, ncap);
        if (!np) { b->failed = 1; return; }
        b->p = np;
        b->cap = ncap;
    }
}

static char *sb_finish(strbuf *b, ckt_error *err)
{
    if (b->failed || !b->p) {
        free(b->p);
        ckt_fail(err, CKT_ENOMEM, "render: out of memory");
        return NULL;
    }
    return b->p;
}

static int check(const ckt_cells *c, ckt_error *err)
{
    if (!c || !c->values) return ckt_fail(err, CKT_EINVAL, "render: no cells"), 0;
    if (c->rows <= 0 || c->cols <= 0) return ckt_fail(err, CKT_EINVAL, "render: %lld x %lld cells: both must be positive", (long long)c->rows, (long long)c->cols), 0;
    if (c->rows > CKT_RENDER_MAX_CELLS / c->cols)
        return ckt_fail(err, CKT_ECAPACITY, "render: %lld x %lld cells is more than %d", (long long)c->rows, (long long)c->cols, CKT_RENDER_MAX_CELLS), 0;
    return 1;
}

static const char *cell_text(const ckt_cells *c, int64_t i, char *tmp, size_t n)
{
    if (c->labels && c->labels[i]) return c->labels[i];
    snprintf(tmp, n, "%lld", (long long)c->values[i]);
    return tmp;
}

char *ckt_render_grid(const ckt_cells *c, ckt_error *err)
{
    if (!check(c, err)) return NULL;
    int64_t total = c->rows * c->cols;
    size_t w = 1;
    char tmp[32];
    for (int64_t i = 0; i < total; i++) {
        size_t n = strlen(cell_text(c, i, tmp, sizeof tmp));
        if (n > w) w = n;
    }
    snprintf(tmp, sizeof tmp, "%lld", (long long)(c->rows - 1));
    size_t rw = strlen(tmp);
    strbuf b = {0};
    if (c->title) sb_printf(&b, "%s\n", c->title);
    sb_printf(&b, "%*s    ", (int)rw, "");
    for (int64_t j = 0; j < c->cols; j++) sb_printf(&b, "%*lld   ", (int)w, (long long)j);
    sb_printf(&b, "\n");
    for (int64_t i = 0; i < c->rows; i++) {
        sb_printf(&b, "%*s  +", (int)rw, "");
        for (int64_t j = 0; j < c->cols; j++) {
            for (size_t k = 0; k < w + 2; k++) sb_printf(&b, "-");
            sb_printf(&b, "+");
        }
        sb_printf(&b, "\n%*lld  |", (int)rw, (long long)i);
        for (int64_t j = 0; j < c->cols; j++) sb_printf(&b, " %*s |", (int)w, cell_text(c, i * c->cols + j, tmp, sizeof tmp));
        sb_printf(&b, "\n");
    }
    sb_printf(&b, "%*s  +", (int)rw, "");
    for (int64_t j = 0; j < c->cols; j++) {
        for (size_t k = 0; k < w + 2; k++) sb_printf(&b, "-");
        sb_printf(&b, "+");
    }
    sb_printf(&b, "\n");
    return sb_finish(&b, err);
}

/* A deterministic pastel palette keyed by value (8 hues x 2 tones, like print_latex). */
static void colour(int64_t v, char *out, size_t n)
{
    static const int hue[8][3] = {{175, 175, 255}, {175, 255, 175}, {255, 255, 175}, {255, 175, 175},
                                  {210, 210, 255}, {210, 255, 210}, {255, 255, 210}, {255, 210, 210}};
    uint64_t k = (uint64_t)(v < 0 ? -v : v);
    const int *h = hue[k % 8];
    int shade = (int)((k / 8) % 2) * 20;
    snprintf(out, n, "#%02x%02x%02x", h[0] - shade, h[1] - shade, h[2] - shade);
}

static void xml_escaped(strbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '&': sb_printf(b, "&amp;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default: sb_printf(b, "%c", *s);
        }
    }
}

char *ckt_render_svg(const ckt_cells *c, ckt_error *err)
{
    if (!check(c, err)) return NULL;
    int64_t total = c->rows * c->cols;
    size_t w = 1;
    char tmp[32], fill[16];
    for (int64_t i = 0; i < total; i++) {
        size_t n = strlen(cell_text(c, i, tmp, sizeof tmp));
        if (n > w) w = n;
    }
    /* cells wide enough for their text; font shrinks for big tiles so 128x128 stays legible */
    int font = c->rows * c->cols > 4096 ? 7 : 10;
    int ch = font + 6, cw = (int)w * font * 6 / 10 + 6;
    int margin = 4 * font, top = margin + (c->title ? 2 * font : 0);
    int64_t width = margin + c->cols * cw + 4, height = top + c->rows * ch + 4;
    strbuf b = {0};
    sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" font-family=\"monospace\" font-size=\"%d\">\n",
              (long long)width, (long long)height, font);
    if (c->title) {
        sb_printf(&b, "<text x=\"%d\" y=\"%d\">", margin, font + 2);
        xml_escaped(&b, c->title);
        sb_printf(&b, "</text>\n");
    }
    sb_printf(&b, "<g text-anchor=\"middle\" dominant-baseline=\"central\">\n");
    for (int64_t j = 0; j < c->cols; j++)
        sb_printf(&b, "<text x=\"%lld\" y=\"%d\">%lld</text>\n", (long long)(margin + j * cw + cw / 2), top - ch / 2, (long long)j);
    for (int64_t i = 0; i < c->rows; i++)
        sb_printf(&b, "<text x=\"%d\" y=\"%lld\">%lld</text>\n", margin / 2, (long long)(top + i * ch + ch / 2), (long long)i);
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t j = 0; j < c->cols; j++) {
            int64_t k = i * c->cols + j;
            colour(c->values[k], fill, sizeof fill);
            long long x = (long long)(margin + j * cw), y = (long long)(top + i * ch);
            sb_printf(&b, "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\"/>", x, y, cw, ch, fill);
            sb_printf(&b, "<text x=\"%lld\" y=\"%lld\">", x + cw / 2, y + ch / 2);
            xml_escaped(&b, cell_text(c, k, tmp, sizeof tmp));
            sb_printf(&b, "</text>\n");
        }
    sb_printf(&b, "</g>\n</svg>\n");
    return sb_finish(&b, err);
}
