/* The dosing plan: each subject's records expanded into actions (resets,
 * steady-state markers, boluses, infusion starts and ends, additional doses,
 * observations), sorted by time with coincident actions in record order,
 * and the subject's observation times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dosing_impl.h"

struct ot_dose_plan {
    int64_t nsubj;
    int64_t ncmt;
    int64_t *cmt_state;   /* [ncmt] */
    double *ids;          /* [nsubj] */
    int64_t *act_first;   /* [nsubj + 1]: subject s's actions [first[s], first[s+1]) */
    ot_dose_action *acts; /* every subject's, in order */
    int64_t *obs_first;   /* [nsubj + 1] */
    double *obs_t;        /* [observations] */
    int32_t *obs_at_dose;
    int64_t *obs_row;
};

/* An action and its place among a record's actions, the sort's last key. */
typedef struct {
    ot_dose_action a;
    int32_t seq; /* 0 reset, 1 steady-state marker, 2 bolus or start, 3 end */
} keyed;

static int in_order(const void *x, const void *y)
{
    const keyed *p = x, *q = y;
    if (p->a.time != q->a.time)
        return p->a.time < q->a.time ? -1 : 1;
    if (p->a.row != q->a.row)
        return p->a.row < q->a.row ? -1 : 1;
    if (p->a.addl != q->a.addl)
        return p->a.addl < q->a.addl ? -1 : 1;
    return (p->seq > q->seq) - (p->seq < q->seq);
}

static double or0(const ot_records *r, int c, int64_t i)
{
    const double v = ot__dosing_get(r, c, i);
    return isnan(v) ? 0 : v;
}

static int is_dose(int32_t evid)
{
    return evid == OT_EVID_DOSE || evid == OT_EVID_RESET_DOSE;
}

/* The actions one dose gives (per administration), and the form it takes. */
typedef enum { BOLUS, INFUSION, MODELLED, CONSTANT } form;

static form form_of(const ot_records *r, int64_t i)
{
    const double rate = or0(r, OT__COL_RATE, i);
    if (rate < 0)
        return MODELLED;
    if (rate > 0)
        return or0(r, OT__COL_SS, i) == 1 && or0(r, OT__COL_II, i) == 0 ? CONSTANT
                                                                        : INFUSION;
    return or0(r, OT__COL_DUR, i) > 0 ? INFUSION : BOLUS;
}

/* How many actions row i gives. */
static int64_t count_of(const ot_records *r, int64_t i)
{
    if (!is_dose(r->evid[i]))
        return 1;
    const form f = form_of(r, i);
    return (r->evid[i] == OT_EVID_RESET_DOSE) + (or0(r, OT__COL_SS, i) > 0) +
           ((int64_t)or0(r, OT__COL_ADDL, i) + 1) * (f == INFUSION ? 2 : 1);
}

/* The CMT of every row against the model's compartments. */
static int check_cmt(const ot_records *r, int64_t ncmt)
{
    for (int64_t i = 0; i < r->nrows; i++) {
        const double cmt = ot__dosing_get(r, OT__COL_CMT, i);
        if (!isnan(cmt) && (cmt < 1 || cmt > (double)ncmt)) {
            char id[32], c[32];
            ot__dosing_num(id, ot__dosing_get(r, OT__COL_ID, i));
            ot__dosing_num(c, cmt);
            return ot_set_error(
                OT_ERR_VALUE,
                "row %lld (ID %s), CMT: %s is not a compartment; the model "
                "has %lld (CMT 1 to %lld)",
                (long long)i + 1, id, c, (long long)ncmt, (long long)ncmt);
        }
    }
    return OT_OK;
}

/* Row i's actions, appended at *k; doses numbered from *ndose. */
static void expand(const ot_records *r, int64_t i, const int64_t *cmt_state, keyed *out,
                   int64_t *k, int64_t *ndose)
{
    const double cmt_v = ot__dosing_get(r, OT__COL_CMT, i);
    ot_dose_action base = {0};
    base.time = ot__dosing_get(r, OT__COL_TIME, i);
    base.row = i + 1;
    base.dose = -1;
    base.state = -1;
    if (!isnan(cmt_v)) {
        base.cmt = (int64_t)cmt_v;
        base.state = cmt_state[base.cmt - 1];
    }
    const int32_t evid = r->evid[i];
    if (!is_dose(evid)) {
        const int obs = evid == OT_EVID_OBSERVATION && or0(r, OT__COL_MDV, i) != 1;
        base.kind = evid == OT_EVID_RESET ? OT_DOSE_RESET
                    : obs                 ? OT_DOSE_OBSERVATION
                                          : OT_DOSE_OTHER;
        if (evid == OT_EVID_RESET || !obs) {
            base.cmt = 0;
            base.state = -1;
        }
        out[(*k)++] = (keyed){base, evid == OT_EVID_RESET ? 0 : 2};
        return;
    }
    if (isnan(cmt_v)) {
        base.cmt = 1;
        base.state = cmt_state[0];
    }
    base.ss = (int32_t)or0(r, OT__COL_SS, i);
    base.ii = or0(r, OT__COL_II, i);
    if (evid == OT_EVID_RESET_DOSE) {
        ot_dose_action reset = base;
        reset.kind = OT_DOSE_RESET;
        reset.cmt = 0;
        reset.state = -1;
        out[(*k)++] = (keyed){reset, 0};
    }
    const double amt = ot__dosing_get(r, OT__COL_AMT, i);
    const double rate = or0(r, OT__COL_RATE, i), dur = or0(r, OT__COL_DUR, i);
    const form f = form_of(r, i);
    base.amount = amt;
    if (f == MODELLED) {
        base.rate_kind = rate == -1 ? OT_RATE_MODELLED : OT_DURATION_MODELLED;
        base.rate = NAN;
        base.duration = NAN;
    } else if (f == INFUSION) {
        base.rate_kind = rate > 0 ? OT_RATE_DATA : OT_DURATION_DATA;
        base.rate = rate > 0 ? rate : amt / dur;
        base.duration = rate > 0 ? amt / rate : dur;
    } else if (f == CONSTANT) {
        base.rate = rate;
        base.duration = INFINITY;
    }
    if (base.ss > 0) {
        ot_dose_action ss = base;
        ss.kind = OT_DOSE_STEADY_STATE;
        ss.dose = *ndose;
        out[(*k)++] = (keyed){ss, 1};
    }
    const int64_t addl = (int64_t)or0(r, OT__COL_ADDL, i);
    for (int64_t j = 0; j <= addl; j++) {
        ot_dose_action d = base;
        d.time = base.time + (double)j * base.ii;
        d.addl = (int32_t)j;
        d.dose = (*ndose)++;
        d.kind = f == BOLUS ? OT_DOSE_BOLUS : OT_DOSE_INFUSION_START;
        out[(*k)++] = (keyed){d, 2};
        if (f == INFUSION) {
            d.kind = OT_DOSE_INFUSION_END;
            d.time += base.duration;
            out[(*k)++] = (keyed){d, 3};
        }
    }
}

/* Sorts one subject's n actions, drops the ends of infusions a reset ended
 * and numbers the doses in plan order; returns how many are left. flags,
 * open and map: scratch of ndose entries each. */
static int64_t settle(keyed *a, int64_t n, int64_t ndose, int8_t *flags, int64_t *open,
                      int64_t *map)
{
    qsort(a, (size_t)n, sizeof *a, in_order);
    memset(flags, 0, (size_t)ndose);
    int64_t nopen = 0, kept = 0;
    for (int64_t i = 0; i < n; i++) {
        const ot_dose_action *x = &a[i].a;
        if (x->kind == OT_DOSE_RESET) {
            for (int64_t j = 0; j < nopen; j++)
                if (flags[open[j]] == 1)
                    flags[open[j]] = 3; /* ended by the reset */
            nopen = 0;
        } else if (x->kind == OT_DOSE_INFUSION_START) {
            flags[x->dose] = 1;
            open[nopen++] = x->dose;
        } else if (x->kind == OT_DOSE_INFUSION_END) {
            if (flags[x->dose] == 3)
                continue;
            flags[x->dose] = 2;
        }
        a[kept++] = a[i];
    }
    for (int64_t j = 0; j < ndose; j++)
        map[j] = -1;
    int64_t next = 0;
    for (int64_t i = 0; i < kept; i++) {
        int64_t *d = &a[i].a.dose;
        if (*d >= 0) {
            if (map[*d] < 0)
                map[*d] = next++;
            *d = map[*d];
        }
    }
    return kept;
}

static int kind_jumps(int32_t kind)
{
    return kind == OT_DOSE_BOLUS || kind == OT_DOSE_INFUSION_START ||
           kind == OT_DOSE_RESET || kind == OT_DOSE_STEADY_STATE;
}

/* The observations of the plan's actions, subject by subject. */
static int observations(ot_dose_plan *pl)
{
    int64_t nobs = 0;
    const int64_t nact = pl->act_first[pl->nsubj];
    for (int64_t i = 0; i < nact; i++)
        nobs += pl->acts[i].kind == OT_DOSE_OBSERVATION;
    const size_t m = (size_t)(nobs > 0 ? nobs : 1);
    pl->obs_first = malloc((size_t)(pl->nsubj + 1) * sizeof *pl->obs_first);
    pl->obs_t = malloc(m * sizeof *pl->obs_t);
    pl->obs_at_dose = malloc(m * sizeof *pl->obs_at_dose);
    pl->obs_row = malloc(m * sizeof *pl->obs_row);
    if (pl->obs_first == NULL || pl->obs_t == NULL || pl->obs_at_dose == NULL ||
        pl->obs_row == NULL)
        return ot_set_error(OT_ERR_NOMEM,
                            "ot_dose_plan_new: out of memory for %lld "
                            "observations",
                            (long long)nobs);
    int64_t k = 0;
    for (int64_t s = 0; s < pl->nsubj; s++) {
        pl->obs_first[s] = k;
        const int64_t end = pl->act_first[s + 1];
        for (int64_t a = pl->act_first[s]; a < end;) {
            /* a group of actions at one time */
            int64_t b = a, jumps = 0;
            while (b < end && pl->acts[b].time == pl->acts[a].time)
                jumps |= kind_jumps(pl->acts[b++].kind);
            for (; a < b; a++)
                if (pl->acts[a].kind == OT_DOSE_OBSERVATION) {
                    pl->obs_t[k] = pl->acts[a].time;
                    pl->obs_at_dose[k] = (int32_t)jumps;
                    pl->obs_row[k++] = pl->acts[a].row;
                }
        }
    }
    pl->obs_first[pl->nsubj] = k;
    return OT_OK;
}

/* Every subject's actions, expanded and settled, into pl. */
static int actions(ot_dose_plan *pl, const ot_records *r, const int64_t *cmt_state)
{
    int64_t total = 0, most = 1;
    for (int64_t s = 0; s < r->nsubj; s++) {
        int64_t n = 0;
        for (int64_t i = r->subj_first[s]; i < r->subj_first[s + 1]; i++)
            n += count_of(r, i); /* each at most 2 + 2 (1 + OT__DOSING_MAX_ADDL) */
        if (n > INT64_MAX / 2 - total)
            return ot_set_error(OT_ERR_OVERFLOW, "ot_dose_plan_new: the plan's actions "
                                                 "overflow");
        total += n;
        most = n > most ? n : most;
    }
    if ((uint64_t)total > SIZE_MAX / sizeof(keyed))
        return ot_set_error(OT_ERR_OVERFLOW, "ot_dose_plan_new: %lld actions overflow",
                            (long long)total);
    pl->act_first = malloc((size_t)(r->nsubj + 1) * sizeof *pl->act_first);
    pl->acts = malloc((size_t)(total > 0 ? total : 1) * sizeof *pl->acts);
    keyed *work = malloc((size_t)most * sizeof *work);
    int8_t *flags = malloc((size_t)most);
    int64_t *open = malloc((size_t)most * sizeof *open);
    int64_t *map = malloc((size_t)most * sizeof *map);
    int st = OT_OK;
    if (pl->act_first == NULL || pl->acts == NULL || work == NULL || flags == NULL ||
        open == NULL || map == NULL)
        st =
            ot_set_error(OT_ERR_NOMEM, "ot_dose_plan_new: out of memory for %lld actions",
                         (long long)total);
    int64_t at = 0;
    for (int64_t s = 0; s < r->nsubj && st == OT_OK; s++) {
        int64_t k = 0, ndose = 0;
        for (int64_t i = r->subj_first[s]; i < r->subj_first[s + 1]; i++)
            expand(r, i, cmt_state, work, &k, &ndose);
        k = settle(work, k, ndose, flags, open, map);
        pl->act_first[s] = at;
        for (int64_t i = 0; i < k; i++)
            pl->acts[at++] = work[i].a;
    }
    if (st == OT_OK)
        pl->act_first[r->nsubj] = at;
    free(work);
    free(flags);
    free(open);
    free(map);
    return st;
}

int ot_dose_plan_new(const ot_records *records, int64_t ncmt, const int64_t *cmt_state,
                     ot_dose_plan **out)
{
    if (out == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_dose_plan_new: out is NULL");
    *out = NULL;
    if (records == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_dose_plan_new: records is NULL");
    if (ncmt < 1)
        return ot_set_error(
            OT_ERR_ARG, "ot_dose_plan_new: ncmt is %lld; a model has >= 1 compartment",
            (long long)ncmt);
    if ((uint64_t)ncmt > SIZE_MAX / sizeof(int64_t))
        return ot_set_error(OT_ERR_OVERFLOW, "ot_dose_plan_new: ncmt %lld overflows",
                            (long long)ncmt);
    if (cmt_state != NULL)
        for (int64_t c = 0; c < ncmt; c++)
            if (cmt_state[c] < 0)
                return ot_set_error(
                    OT_ERR_ARG,
                    "ot_dose_plan_new: cmt_state[%lld] (CMT %lld) is %lld; "
                    "a state index is >= 0",
                    (long long)c, (long long)c + 1, (long long)cmt_state[c]);
    int st = check_cmt(records, ncmt);
    if (st != OT_OK)
        return st;
    ot_dose_plan *pl = calloc(1, sizeof *pl);
    int64_t *map = malloc((size_t)ncmt * sizeof *map);
    if (pl == NULL || map == NULL) {
        free(pl);
        free(map);
        return ot_set_error(OT_ERR_NOMEM, "ot_dose_plan_new: out of memory");
    }
    for (int64_t c = 0; c < ncmt; c++)
        map[c] = cmt_state != NULL ? cmt_state[c] : c;
    pl->ncmt = ncmt;
    pl->cmt_state = map; /* the plan's from here */
    pl->nsubj = records->nsubj;
    pl->ids = malloc((size_t)(pl->nsubj > 0 ? pl->nsubj : 1) * sizeof *pl->ids);
    if (pl->ids == NULL)
        st = ot_set_error(OT_ERR_NOMEM,
                          "ot_dose_plan_new: out of memory for %lld subjects",
                          (long long)pl->nsubj);
    for (int64_t s = 0; s < pl->nsubj && st == OT_OK; s++)
        pl->ids[s] = ot__dosing_get(records, OT__COL_ID, records->subj_first[s]);
    if (st == OT_OK)
        st = actions(pl, records, map);
    if (st == OT_OK)
        st = observations(pl);
    if (st != OT_OK) {
        ot_dose_plan_free(pl);
        return st;
    }
    *out = pl;
    return OT_OK;
}

void ot_dose_plan_free(ot_dose_plan *plan)
{
    if (plan == NULL)
        return;
    free(plan->ids);
    free(plan->cmt_state);
    free(plan->act_first);
    free(plan->acts);
    free(plan->obs_first);
    free(plan->obs_t);
    free(plan->obs_at_dose);
    free(plan->obs_row);
    free(plan);
}

int64_t ot_dose_plan_subjects(const ot_dose_plan *plan)
{
    return plan == NULL ? 0 : plan->nsubj;
}

static int check_subject(const ot_dose_plan *plan, int64_t s, const char *fn)
{
    if (plan == NULL)
        return ot_set_error(OT_ERR_ARG, "%s: plan is NULL", fn);
    if (s < 0 || s >= plan->nsubj)
        return ot_set_error(
            OT_ERR_ARG, "%s: subject %lld of %lld; subjects are 0 to %lld", fn,
            (long long)s, (long long)plan->nsubj, (long long)plan->nsubj - 1);
    return OT_OK;
}

int ot_dose_plan_subject_id(const ot_dose_plan *plan, int64_t s, double *id)
{
    int st = check_subject(plan, s, "ot_dose_plan_subject_id");
    if (st == OT_OK && id == NULL)
        st = ot_set_error(OT_ERR_ARG, "ot_dose_plan_subject_id: id is NULL");
    if (st == OT_OK)
        *id = plan->ids[s];
    return st;
}

int ot_dose_plan_actions(const ot_dose_plan *plan, int64_t s,
                         const ot_dose_action **actions, int64_t *n)
{
    const int st = check_subject(plan, s, "ot_dose_plan_actions");
    if (st != OT_OK)
        return st;
    const int64_t a = plan->act_first[s], count = plan->act_first[s + 1] - a;
    if (actions != NULL)
        *actions = count > 0 ? plan->acts + a : NULL;
    if (n != NULL)
        *n = count;
    return OT_OK;
}

int ot_dose_plan_observations(const ot_dose_plan *plan, int64_t s, int64_t *n,
                              const double **times, const int32_t **at_dose,
                              const int64_t **rows)
{
    const int st = check_subject(plan, s, "ot_dose_plan_observations");
    if (st != OT_OK)
        return st;
    const int64_t a = plan->obs_first[s], count = plan->obs_first[s + 1] - a;
    if (n != NULL)
        *n = count;
    if (times != NULL)
        *times = count > 0 ? plan->obs_t + a : NULL;
    if (at_dose != NULL)
        *at_dose = count > 0 ? plan->obs_at_dose + a : NULL;
    if (rows != NULL)
        *rows = count > 0 ? plan->obs_row + a : NULL;
    return OT_OK;
}

int64_t ot_dose_plan_compartments(const ot_dose_plan *plan)
{
    return plan == NULL ? -1 : plan->ncmt;
}

int64_t ot_dose_plan_cmt_state(const ot_dose_plan *plan, int64_t c)
{
    return plan == NULL || c < 0 || c >= plan->ncmt ? -1 : plan->cmt_state[c];
}
