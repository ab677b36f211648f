/* Text grids and SVG pictures of cell tables (see ckt/visual.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/visual.h"
#include "strbuf.h"

static int check(const ckt_cells *c, ckt_error *err)
{
    if (!c) return ckt_fail(err, CKT_EINVAL, "render: cells is NULL"), 0;
    if (!c->values) return ckt_fail(err, CKT_EINVAL, "render: values is NULL"), 0;
    if (c->rows <= 0 || c->cols <= 0)
        return ckt_fail(err, CKT_EINVAL, "render: %lld x %lld cells: both must be positive",
                        (long long)c->rows, (long long)c->cols),
               0;
    if (c->rows > CKT_RENDER_MAX_CELLS / c->cols)
        return ckt_fail(err, CKT_ECAPACITY, "render: %lld x %lld cells is more than %d",
                        (long long)c->rows, (long long)c->cols, CKT_RENDER_MAX_CELLS),
               0;
    return 1;
}

static const char *cell_text(const ckt_cells *c, int64_t i, char *tmp, size_t n)
{
    if (c->labels && c->labels[i]) return c->labels[i];
    snprintf(tmp, n, "%lld", (long long)c->values[i]);
    return tmp;
}

static size_t digits(int64_t v)
{
    char tmp[32];
    return (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v);
}

/* Width of the widest cell. Unlabelled cells follow print_layout, which sizes cells for
 * the digits of cosize (= largest value + 1 for a layout with non-negative strides). */
static size_t cell_width(const ckt_cells *c)
{
    int64_t total = c->rows * c->cols;
    size_t w = 1;
    char tmp[32];
    for (int64_t i = 0; i < total; i++) {
        size_t n = strlen(cell_text(c, i, tmp, sizeof tmp));
        if (!(c->labels && c->labels[i]) && c->values[i] >= 0 && c->values[i] < INT64_MAX) {
            size_t nc = digits(c->values[i] + 1);
            if (nc > n) n = nc;
        }
        if (n > w) w = n;
    }
    return w;
}

/* The rule between rows: "+" and w+2 dashes per column, then "+". */
static void rule(ckt_sb *b, size_t margin, int64_t cols, size_t w)
{
    ckt_sb_repeat(b, ' ', margin);
    for (int64_t j = 0; j < cols; j++) {
        ckt_sb_printf(b, "+");
        ckt_sb_repeat(b, '-', w + 2);
    }
    ckt_sb_printf(b, "+\n");
}

/* CuTe's print_layout, character for character when there are fewer than 100 rows and
 * the column numbers fit the cells; wider row or column numbers widen the margins
 * instead of breaking the alignment. */
char *ckt_render_grid(const ckt_cells *c, ckt_error *err)
{
    if (!check(c, err)) return NULL;
    size_t w = cell_width(c), rw = digits(c->rows - 1), cwid = digits(c->cols - 1);
    if (cwid > w) w = cwid;
    if (rw < 2) rw = 2;
    size_t margin = rw + 2;
    char tmp[32];
    ckt_sb b = {0};
    if (c->title) ckt_sb_printf(&b, "%s\n", c->title);
    ckt_sb_repeat(&b, ' ', margin);
    for (int64_t j = 0; j < c->cols; j++) ckt_sb_printf(&b, "  %*lld ", (int)w, (long long)j);
    ckt_sb_printf(&b, "\n");
    for (int64_t i = 0; i < c->rows; i++) {
        rule(&b, margin, c->cols, w);
        ckt_sb_printf(&b, "%*lld  ", (int)rw, (long long)i);
        for (int64_t j = 0; j < c->cols; j++)
            ckt_sb_printf(&b, "| %*s ", (int)w, cell_text(c, i * c->cols + j, tmp, sizeof tmp));
        ckt_sb_printf(&b, "|\n");
    }
    rule(&b, margin, c->cols, w);
    return ckt_sb_finish(&b, "render", err);
}

/* A deterministic palette keyed by value: 8 hues x 2 tones, light enough for black text. */
static const char *const palette[16] = {
    "#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2",
    "#9b9beb", "#9beb9b", "#ebeb9b", "#eb9b9b", "#bebeeb", "#bee6be", "#ebebbe", "#ebbebe"};

static int colour_class(int64_t v)
{
    int64_t k = v % 16;
    return (int)(k < 0 ? k + 16 : k);
}

static void xml_escaped(ckt_sb *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': ckt_sb_printf(b, "&lt;"); break;
        case '>': ckt_sb_printf(b, "&gt;"); break;
        case '&': ckt_sb_printf(b, "&amp;"); break;
        case '"': ckt_sb_printf(b, "&quot;"); break;
        default:
            if ((unsigned char)*s < 0x20)
                ckt_sb_printf(b, " "); /* control characters are not XML */
            else
                ckt_sb_printf(b, "%c", *s);
        }
    }
}

/* One path per colour (all cells of that colour), one text per cell in row groups, and the
 * grid lines as one path: about 50 bytes per cell, so 128x128 stays under a megabyte. */
char *ckt_render_svg_sized(const ckt_cells *c, int cell_height, ckt_error *err)
{
    if (!check(c, err)) return NULL;
    if (cell_height != 0 && (cell_height < 4 || cell_height > 200)) {
        ckt_fail(err, CKT_EINVAL,
                 "render: cell size %d must be between 4 and 200 pixels (0 picks one)",
                 cell_height);
        return NULL;
    }
    int64_t total = c->rows * c->cols;
    size_t w = 1;
    char tmp[32];
    for (int64_t i = 0; i < total; i++) {
        size_t n = strlen(cell_text(c, i, tmp, sizeof tmp));
        if (n > w) w = n;
    }
    if (w > 64) w = 64; /* very long labels overflow their cell rather than the picture */
    /* the font shrinks for big tiles so that 128x128 stays a picture one can take in */
    int ch = cell_height ? cell_height : (total > 4096 ? 12 : 18);
    int font = ch * 6 / 10 < 4 ? 4 : ch * 6 / 10;
    int cw = (int)w * font * 6 / 10 + font; /* monospace glyphs are about 0.6 em wide */
    if (cw < ch) cw = ch;
    int left = (int)digits(c->rows - 1) * font * 6 / 10 + font, top = ch + (c->title ? ch + 4 : 0);
    int64_t width = left + c->cols * cw + 2, height = top + c->rows * ch + 2;
    ckt_sb b = {0};
    ckt_sb_printf(&b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
                  "viewBox=\"0 0 %lld %lld\">\n",
                  (long long)width, (long long)height, (long long)width, (long long)height);
    ckt_sb_printf(&b,
                  "<style>text{font:%dpx "
                  "monospace;text-anchor:middle;dominant-baseline:central}.t{text-anchor:start}"
                  ".i{fill:#555}path.g{fill:none;stroke:#000;stroke-width:.5}</style>\n",
                  font);
    if (c->title) {
        ckt_sb_printf(&b, "<text class=\"t\" x=\"2\" y=\"%d\">", ch / 2 + 2);
        xml_escaped(&b, c->title);
        ckt_sb_printf(&b, "</text>\n");
    }
    /* cell backgrounds: one path per colour */
    for (int k = 0; k < 16; k++) {
        int any = 0;
        for (int64_t i = 0; i < total; i++) {
            if (colour_class(c->values[i]) != k) continue;
            if (!any) ckt_sb_printf(&b, "<path fill=\"%s\" d=\"", palette[k]);
            any = 1;
            ckt_sb_printf(&b, "M%lld %lldh%dv%dh-%dz", (long long)(left + (i % c->cols) * cw),
                          (long long)(top + (i / c->cols) * ch), cw, ch, cw);
        }
        if (any) ckt_sb_printf(&b, "\"/>\n");
    }
    /* grid lines */
    ckt_sb_printf(&b, "<path class=\"g\" d=\"");
    for (int64_t i = 0; i <= c->rows; i++)
        ckt_sb_printf(&b, "M%d %lldh%lld", left, (long long)(top + i * ch),
                      (long long)(c->cols * cw));
    for (int64_t j = 0; j <= c->cols; j++)
        ckt_sb_printf(&b, "M%lld %dv%lld", (long long)(left + j * cw), top,
                      (long long)(c->rows * ch));
    ckt_sb_printf(&b, "\"/>\n");
    /* column and row indices */
    ckt_sb_printf(&b, "<g class=\"i\" transform=\"translate(0,%d)\">", top - ch / 2);
    for (int64_t j = 0; j < c->cols; j++)
        ckt_sb_printf(&b, "<text x=\"%lld\">%lld</text>", (long long)(left + j * cw + cw / 2),
                      (long long)j);
    ckt_sb_printf(&b, "</g>\n<g class=\"i\">");
    for (int64_t i = 0; i < c->rows; i++)
        ckt_sb_printf(&b, "<text x=\"%d\" y=\"%lld\">%lld</text>", left / 2,
                      (long long)(top + i * ch + ch / 2), (long long)i);
    ckt_sb_printf(&b, "</g>\n");
    /* cell texts, one group per row */
    for (int64_t i = 0; i < c->rows; i++) {
        ckt_sb_printf(&b, "<g transform=\"translate(0,%lld)\">",
                      (long long)(top + i * ch + ch / 2));
        for (int64_t j = 0; j < c->cols; j++) {
            ckt_sb_printf(&b, "<text x=\"%lld\">", (long long)(left + j * cw + cw / 2));
            xml_escaped(&b, cell_text(c, i * c->cols + j, tmp, sizeof tmp));
            ckt_sb_printf(&b, "</text>");
        }
        ckt_sb_printf(&b, "</g>\n");
    }
    ckt_sb_printf(&b, "</svg>\n");
    return ckt_sb_finish(&b, "render", err);
}

char *ckt_render_svg(const ckt_cells *c, ckt_error *err) { return ckt_render_svg_sized(c, 0, err); }
