/* base/list.h: the moves of the intrusive lists, whatever their node
 * type: a list is a head pointer (and a tail pointer, where nodes are
 * appended), and its nodes carry their own next (and prev) fields, so
 * linking allocates nothing. Macros over lvalues: they evaluate their
 * arguments more than once, so pass plain names and fields. */
#ifndef CUBESIM_BASE_LIST_H
#define CUBESIM_BASE_LIST_H

#include <stdlib.h>

/* Append node n, its next field cleared, to the list (head, tail). */
#define LIST_APPEND(head, tail, n, next)                                                   \
        do {                                                                               \
                (n)->next = NULL;                                                          \
                if (tail)                                                                  \
                        (tail)->next = (n);                                                \
                else                                                                       \
                        (head) = (n);                                                      \
                (tail) = (n);                                                              \
        } while (0)

/* Take node n out of the doubly linked list head (the neighbours' links
 * only: n's own are left as they were; a tail pointer is the caller's). */
#define LIST_UNLINK(head, n, prev, next)                                                   \
        do {                                                                               \
                if ((n)->prev)                                                             \
                        (n)->prev->next = (n)->next;                                       \
                else                                                                       \
                        (head) = (n)->next;                                                \
                if ((n)->next)                                                             \
                        (n)->next->prev = (n)->prev;                                       \
        } while (0)

/* Free every node of the list head (each one malloc'd; type its node
 * type), following next: head is NULL after. */
#define LIST_FREE(head, type, next)                                                        \
        do {                                                                               \
                while (head) {                                                             \
                        type *list_next_ = (head)->next;                                   \
                        free(head);                                                        \
                        (head) = list_next_;                                               \
                }                                                                          \
        } while (0)

#endif
