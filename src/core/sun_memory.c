/* SUNDIALS' memory under scopes (sun_memory.h). Each block carries a header
 * linking it into the scope it was allocated under (or into itself, with no
 * scope), so that freeing needs no scope and a release frees what is left. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "core/sun_memory.h"

/* The header keeps the block aligned as malloc's own. */
typedef union {
    ot__sun_link link;
    max_align_t align;
} header;

typedef struct frame {
    ot__sun_scope *scope;
    jmp_buf env;
    struct frame *outer;
} frame;

static _Thread_local frame *current;

void ot__sun_scope_init(ot__sun_scope *s)
{
    s->head.prev = s->head.next = &s->head;
    s->failed = 0;
}

static void link_into(ot__sun_link *l, ot__sun_scope *s)
{
    if (s == NULL) {
        l->prev = l->next = l;
        return;
    }
    l->next = &s->head;
    l->prev = s->head.prev;
    s->head.prev->next = l;
    s->head.prev = l;
}

static void unlink_block(ot__sun_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
}

/* Memory ran out: under a protected scope, back to its protect call. */
static void *out_of_memory(void)
{
    frame *f = current;
    if (f != NULL) {
        f->scope->failed = 1;
        longjmp(f->env, 1);
    }
    return NULL;
}

static void *finish(header *h)
{
    if (h == NULL)
        return out_of_memory();
    link_into(&h->link, current ? current->scope : NULL);
    return h + 1;
}

void *ot__sun_malloc(size_t size)
{
    if (size > SIZE_MAX - sizeof(header))
        return out_of_memory();
    return finish(malloc(sizeof(header) + size));
}

void *ot__sun_calloc(size_t count, size_t size)
{
    if (size != 0 && count > (SIZE_MAX - sizeof(header)) / size)
        return out_of_memory();
    return finish(calloc(1, sizeof(header) + count * size));
}

void *ot__sun_realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return ot__sun_malloc(size);
    if (size > SIZE_MAX - sizeof(header))
        return out_of_memory();
    header *h = (header *)ptr - 1;
    /* Off its list while realloc may move it; back on the same one after. */
    ot__sun_link *prev = h->link.prev;
    const int alone = prev == &h->link;
    unlink_block(&h->link);
    header *q = realloc(h, sizeof(header) + size);
    header *keep = q ? q : h;
    if (alone) {
        keep->link.prev = keep->link.next = &keep->link;
    } else { /* after its old neighbour, which did not move */
        keep->link.prev = prev;
        keep->link.next = prev->next;
        prev->next->prev = &keep->link;
        prev->next = &keep->link;
    }
    return q ? (void *)(q + 1) : out_of_memory();
}

void ot__sun_free(void *ptr)
{
    if (ptr == NULL)
        return;
    header *h = (header *)ptr - 1;
    unlink_block(&h->link);
    free(h);
}

void ot__sun_scope_release(ot__sun_scope *s)
{
    ot__sun_link *l = s->head.next;
    while (l != &s->head) {
        ot__sun_link *next = l->next;
        free((header *)(void *)l);
        l = next;
    }
    ot__sun_scope_init(s);
}

int ot__sun_protect(ot__sun_scope *s, int (*fn)(void *), void *arg)
{
    frame f;
    f.scope = s;
    f.outer = current;
    current = &f;
    /* Only f (not modified after setjmp) is read after the jump. */
    if (setjmp(f.env) != 0) {
        current = f.outer;
        return OT__SUN_NOMEM;
    }
    const int r = fn(arg);
    current = f.outer;
    return r;
}
