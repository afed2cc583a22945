/* The CSV reader: NONMEM-style text (a header of names, comma-separated
 * numbers, `.` or empty for missing, `#` comment lines, CRLF) into records.
 * Two passes over the text: the first finds the header and counts the
 * records, the second reads the cells into the columns. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dosing_impl.h"

/* A line of text: [p, end), CR stripped, and its 1-based number. */
typedef struct {
    const char *p, *end, *next; /* next: the start of the following line */
    int64_t number;
} line;

/* The line starting at p (before end), or 0 when p is at end. */
static int line_at(const char *p, const char *end, int64_t number, line *ln)
{
    if (p >= end)
        return 0;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    ln->p = p;
    ln->end = nl != NULL ? nl : end;
    ln->next = nl != NULL ? nl + 1 : end;
    if (ln->end > p && ln->end[-1] == '\r')
        ln->end--;
    ln->number = number;
    return 1;
}

static int blank(char c) { return c == ' ' || c == '\t'; }

/* Blank lines and `#` comments hold no record. */
static int skipped(const line *ln)
{
    const char *q = ln->p;
    while (q < ln->end && blank(*q))
        q++;
    return q == ln->end || *q == '#';
}

/* The next cell of a line from *q: [*a, *b) trimmed; *q moves past its
 * comma. Returns 0 past the last cell. */
static int cell(const char **q, const char *end, int *more, const char **a,
                const char **b)
{
    if (!*more)
        return 0;
    const char *c = memchr(*q, ',', (size_t)(end - *q));
    const char *stop = c != NULL ? c : end;
    *a = *q;
    *b = stop;
    while (*a < *b && blank(**a))
        (*a)++;
    while (*b > *a && blank((*b)[-1]))
        (*b)--;
    *more = c != NULL;
    *q = c != NULL ? c + 1 : end;
    return 1;
}

static int64_t count_cells(const line *ln)
{
    int64_t n = 1;
    for (const char *q = ln->p; q < ln->end; q++)
        n += *q == ',';
    return n;
}

/* The header's names as NUL-terminated strings, in one block (*block, the
 * caller frees it) with pointers names[ncols] in it. */
static int header(const line *ln, int64_t *ncols, char **block, char ***names)
{
    const int64_t n = count_cells(ln);
    const size_t len = (size_t)(ln->end - ln->p);
    *block = malloc(len + 1 + (size_t)n * sizeof(char *));
    if (*block == NULL)
        return ot_set_error(OT_ERR_NOMEM, "header: out of memory for %lld names",
                            (long long)n);
    char **ptrs = (char **)(void *)*block;
    char *text = *block + (size_t)n * sizeof(char *);
    const char *q = ln->p, *a, *b;
    int more = 1;
    int64_t j = 0;
    while (cell(&q, ln->end, &more, &a, &b)) {
        memcpy(text, a, (size_t)(b - a));
        ptrs[j++] = text;
        text += b - a;
        *text++ = '\0';
    }
    *ncols = n;
    *names = ptrs;
    return OT_OK;
}

/* One cell's value: NaN for missing, or a refusal naming the text. */
static int number(const char *a, const char *b, double *v, int64_t row, int64_t lineno,
                  const char *col)
{
    if (a == b || (b - a == 1 && *a == '.')) {
        *v = NAN;
        return OT_OK;
    }
    char buf[128];
    const size_t n = (size_t)(b - a);
    if (n < sizeof buf) {
        memcpy(buf, a, n);
        buf[n] = '\0';
        char *stop = NULL;
        *v = strtod(buf, &stop);
        if (stop == buf + n && stop != buf && !blank(buf[0])) {
            if (isfinite(*v))
                return OT_OK;
            return ot_set_error(OT_ERR_ARG,
                                "row %lld (line %lld), %s: \"%s\" is not a finite number",
                                (long long)row, (long long)lineno, col, buf);
        }
    }
    const int shown = n > 40 ? 40 : (int)n;
    return ot_set_error(
        OT_ERR_ARG, "row %lld (line %lld), %s: \"%.*s%s\" is not a number",
        (long long)row, (long long)lineno, col, shown, a, n > 40 ? "..." : "");
}

int ot_records_parse_csv(const char *text, size_t len, ot_records **out)
{
    if (out == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_parse_csv: out is NULL");
    *out = NULL;
    if (text == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_parse_csv: text is NULL");
    const char *end = text + len, *p = text;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    line ln = {0}, head = {0};
    int64_t number_of_line = 1, nrows = 0;
    int have_head = 0;
    for (; line_at(p, end, number_of_line, &ln); p = ln.next, number_of_line++) {
        if (skipped(&ln))
            continue;
        if (have_head)
            nrows++;
        else {
            head = ln;
            have_head = 1;
        }
    }
    if (!have_head)
        return ot_set_error(OT_ERR_ARG,
                            "ot_records_parse_csv: no header (the text has no line "
                            "that is neither blank nor a # comment)");
    int64_t ncols = 0;
    char *block = NULL, **names = NULL;
    int st = header(&head, &ncols, &block, &names);
    if (st != OT_OK)
        return st;
    ot_records *r = ot__dosing_alloc(nrows, ncols, (const char *const *)names);
    free(block);
    if (r == NULL)
        return ot_set_error(OT_ERR_NOMEM,
                            "ot_records_parse_csv: out of memory for %lld rows of %lld "
                            "columns",
                            (long long)nrows, (long long)ncols);
    st = ot__dosing_names(r);
    int64_t row = 0;
    for (p = head.next, number_of_line = head.number + 1;
         st == OT_OK && line_at(p, end, number_of_line, &ln);
         p = ln.next, number_of_line++) {
        if (skipped(&ln))
            continue;
        const int64_t have = count_cells(&ln);
        if (have != ncols) {
            st = ot_set_error(OT_ERR_ARG,
                              "row %lld (line %lld): %lld cells; the header has %lld",
                              (long long)row + 1, (long long)ln.number, (long long)have,
                              (long long)ncols);
            break;
        }
        const char *q = ln.p, *a, *b;
        int more = 1;
        for (int64_t j = 0; st == OT_OK && cell(&q, ln.end, &more, &a, &b); j++)
            st = number(a, b, &r->data[j * nrows + row], row + 1, ln.number, r->names[j]);
        row++;
    }
    if (st == OT_OK)
        st = ot__dosing_validate(r);
    if (st != OT_OK) {
        ot_records_free(r);
        return st;
    }
    *out = r;
    return OT_OK;
}

int ot_records_read_csv(const char *path, ot_records **out)
{
    if (out == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_read_csv: out is NULL");
    *out = NULL;
    if (path == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_read_csv: path is NULL");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return ot_set_error(OT_ERR_ARG,
                            "ot_records_read_csv: cannot open \"%s\" (errno %d)", path,
                            errno);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int st = buf == NULL
                 ? ot_set_error(OT_ERR_NOMEM, "ot_records_read_csv: out of memory")
                 : OT_OK;
    while (st == OT_OK) {
        if (len == cap) {
            char *more = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (more == NULL) {
                st = ot_set_error(OT_ERR_NOMEM,
                                  "ot_records_read_csv: out of memory reading \"%s\" "
                                  "(%zu bytes so far)",
                                  path, len);
                break;
            }
            buf = more;
            cap *= 2;
        }
        const size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                st = ot_set_error(OT_ERR_ARG, "ot_records_read_csv: cannot read \"%s\"",
                                  path);
            break;
        }
    }
    fclose(f);
    if (st == OT_OK)
        st = ot_records_parse_csv(buf, len, out);
    free(buf);
    return st;
}
