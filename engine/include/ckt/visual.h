/* ckt — drawing a 2-D grid of cells as text (like CuTe's print_layout) or SVG.
 * Layouts, distributions (T#/V# cells) and the LDS model (banks x lanes) all draw
 * through this one renderer. The text grid is CuTe's print_layout table; the SVG has
 * one cell per (row, column), coloured by value (a fixed 16-colour palette keyed by
 * value mod 16), labelled, with row and column numbers. */
#ifndef CKT_VISUAL_H
#define CKT_VISUAL_H

#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ckt_cells {
    int64_t rows, cols;
    const int64_t *values;     /* rows*cols, row-major: the number shown and the colour key */
    const char *const *labels; /* rows*cols row-major, or NULL: print values */
    const char *title;         /* may be NULL */
} ckt_cells;

#define CKT_RENDER_MAX_CELLS (1 << 22) /* 4 M cells: beyond that a picture helps nobody */

/* malloc'd NUL-terminated text / SVG document; caller frees. NULL + err on failure. */
char *ckt_render_grid(const ckt_cells *c, ckt_error *err);
char *ckt_render_svg(const ckt_cells *c, ckt_error *err);
/* The same with the cell height in pixels (4..200; 0 picks one by the number of cells). */
char *ckt_render_svg_sized(const ckt_cells *c, int cell_height, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
