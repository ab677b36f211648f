/* Tuple helpers the layout files share (not installed): nodes of a tuple's flattened tree. */
#ifndef CKT_TUPLE_INTERNAL_H
#define CKT_TUPLE_INTERNAL_H

#include "ckt/layout.h"

/* Index one past the subtree rooted at node i. */
int ckt_tuple_skip(const ckt_tuple *t, int i);
/* Node index of child i of the root. */
int ckt_tuple_child_node(const ckt_tuple *t, int i);

#endif
