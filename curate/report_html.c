/* report_html: writes `kcurate report` (see report.h): index.html with Chart.js (Debian's
 * libjs-chart.js, inlined so the page opens from disk with no network) and the report's JSON in
 * the page, drawn by a small page script that records in the DOM what it drew (body
 * data-status, each chart's data-points) for tests and people alike; report.json; and one page
 * per linked kernel (code, verdict evidence, feedback, compile log, every verification). */
#include "common/error.h"
#include "common/fsutil.h"
#include "curate/report.h"

#include <stdlib.h>
#include <string.h>

static void esc(strbuf *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': sb_adds(out, "&lt;"); break;
        case '>': sb_adds(out, "&gt;"); break;
        case '&': sb_adds(out, "&amp;"); break;
        case '"': sb_adds(out, "&quot;"); break;
        default: sb_addch(out, *s);
        }
    }
}

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
    ".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:18px}"
    ".chart{border:1px solid #e3e3e3;padding:8px;height:300px;position:relative}"
    ".chart canvas{width:100%!important;height:260px!important}.note{color:#666;font-size:12px}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;"
    "text-align:left}th{background:#f4f4f4}td.n{text-align:right}"
    "pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;overflow:auto;font-size:12px}";

/* ---- index.html ---- */

static const char page_script[] =
    "(function(){\n"
    "var body=document.body;\n"
    "window.addEventListener('error',function(e){body.dataset.status='error: '+e.message;});\n"
    "try{\n"
    "var d=JSON.parse(document.getElementById('kc-data').textContent);\n"
    "Chart.defaults.animation=false;Chart.defaults.responsive=true;"
    "Chart.defaults.maintainAspectRatio=false;\n"
    "var pal=['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f',"
    "'#bcbd22','#17becf'];\n"
    "var drawn=0;\n"
    "function draw(name,cfg,points){var el=document.querySelector('[data-chart=\"'+name+'\"]');"
    "el.dataset.points=points;if(!points){el.insertAdjacentHTML('beforeend',"
    "'<p class=\"note\">no data in this database</p>');return;}"
    "new Chart(el.querySelector('canvas'),cfg);drawn++;}\n"
    "function pct(t){return {display:true,text:t};}\n"
    "function curve(list,xt,step){var n=0;var ds=list.map(function(s,i){n+=s.points.length;"
    "return {label:s.group+' ('+s.problems+' problems)',data:s.points.map(function(p){"
    "return {x:p[0],y:100*p[1]};}),stepped:'before',borderColor:pal[i%10],"
    "backgroundColor:pal[i%10],pointRadius:2,fill:false};});"
    "return {cfg:{type:'line',data:{datasets:ds},options:{parsing:true,scales:{x:{type:"
    "'linear',title:pct(xt),ticks:step?{stepSize:step}:{}},y:{min:0,max:100,title:pct('problems solved (%)')}}}},n:n};}\n"
    "var c=curve(d.solve_minutes,'budget per problem (minutes, samples and turns together)');"
    "draw('solve_minutes',c.cfg,c.n);\n"
    "c=curve(d.solve_turns,'budget per problem (turns per sample)',1);draw('solve_turns',c.cfg,c.n);\n"
    "var fl=['0','1','1.5','2'],fn=0;"
    "var fds=d.fast_p.map(function(g,i){fn+=4;return {label:g.group,backgroundColor:pal[i%10],"
    "data:fl.map(function(k){return 100*g.values[k];})};});"
    "draw('fast_p',{type:'bar',data:{labels:fl.map(function(k){return 'fast_'+k;}),datasets:fds},"
    "options:{scales:{y:{min:0,max:100,title:pct('problems (%)')}}}},fn);\n"
    "var vm=d.verdict_mix,vn=0,vk=Object.keys(vm.verdicts).sort();"
    "var vds=vk.map(function(v,i){vm.verdicts[v].forEach(function(x){vn+=x?1:0;});"
    "return {label:v,data:vm.verdicts[v],backgroundColor:pal[i%10]};});"
    "draw('verdict_mix',{type:'bar',data:{labels:vm.turns.map(function(t){return 'turn '+(t+1);}),"
    "datasets:vds},options:{scales:{x:{stacked:true},y:{stacked:true,title:pct('turns')}}}},vn);\n"
    "function hist(name,h,label,logy){draw(name,{type:'bar',data:{labels:h.bins,datasets:[{label:"
    "label+' (n='+h.n+')',data:h.counts,backgroundColor:pal[0]}]},options:{scales:{y:{type:"
    "logy?'logarithmic':'linear',ticks:{precision:0},title:pct('kernels')}}}},h.n);}\n"
    "hist('speedup_hist',d.speedup_hist,'correct kernels by eager speedup (log2 bins)',false);\n"
    "hist('roofline_hist',d.roofline_hist,'achieved / attainable (roofline; FP32 CUDA-core peak for "
    "f32/f64, dense tensor-core peak for f16/bf16)',false);\n"
    "var cn=0,cds=[{label:'tokens in',backgroundColor:pal[0],data:[]},{label:'tokens out',"
    "backgroundColor:pal[1],data:[]}];"
    "d.cost.forEach(function(g){cds[0].data.push(g.tokens_in);cds[1].data.push(g.tokens_out);"
    "cn+=(g.tokens_in+g.tokens_out)>0?2:0;});"
    "draw('cost',{type:'bar',data:{labels:d.cost.map(function(g){return g.group;}),datasets:cds},"
    "options:{scales:{x:{stacked:true},y:{stacked:true,title:pct('tokens')}}}},cn);\n"
    "body.dataset.charts=drawn;\n"
    "if(body.dataset.status==='loading')body.dataset.status='ok';\n"
    "}catch(e){body.dataset.status='error: '+e;}\n"
    "})();\n";

static void chart_box(strbuf *h, const char *name, const char *title, const char *note)
{
    sb_addf(h, "<div class=\"chart\" data-chart=\"%s\"><b>%s</b>", name, title);
    if (note)
        sb_addf(h, " <span class=\"note\">%s</span>", note);
    sb_adds(h, "<canvas></canvas></div>\n");
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void num_cell(strbuf *h, json_t *v, const char *fmt)
{
    sb_adds(h, "<td class=\"n\">");
    if (json_is_number(v))
        sb_addf(h, fmt, json_number_value(v));
    else
        sb_adds(h, "-");
    sb_adds(h, "</td>");
}

/* dtype, the fastest correct kernel's TFLOP/s, and its fraction of the dtype's peak, named. */
static void peak_cells(strbuf *h, json_t *p)
{
    sb_adds(h, "<td>");
    esc(h, str(p, "dtype"));
    sb_adds(h, "</td>");
    num_cell(h, json_object_get(p, "best_tflops"), "%.1f");
    json_t *f = json_object_get(p, "peak_fraction");
    if (!json_is_number(f)) {
        sb_adds(h, "<td class=\"n\">-</td>");
        return;
    }
    sb_addf(h, "<td class=\"n\">%.1f%% of %.0f (", 100 * json_number_value(f),
            json_number_value(json_object_get(p, "peak_tflops")));
    esc(h, str(p, "peak"));
    sb_adds(h, ")</td>");
}

static void problem_table(strbuf *h, json_t *problems)
{
    sb_adds(h, "<table id=\"problems\"><tr><th>problem</th><th>attempts</th><th>trajectories</th>"
               "<th>solved</th><th>first solved turn (1 = first)</th><th>solve time (min)</th>"
               "<th>best eager speedup</th><th>dtype</th><th>its TFLOP/s</th><th>of peak (FP32 "
               "CUDA-core for f32/f64, dense tensor-core for f16/bf16)</th><th>kernel</th></tr>\n");
    size_t i;
    json_t *p;
    json_array_foreach(problems, i, p)
    {
        sb_adds(h, "<tr><td>");
        esc(h, str(p, "id"));
        sb_addf(h, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>%s</td>",
                (long long)json_integer_value(json_object_get(p, "attempts")),
                (long long)json_integer_value(json_object_get(p, "trajectories")),
                json_is_true(json_object_get(p, "solved")) ? "yes" : "no");
        num_cell(h, json_object_get(p, "first_solved_turn"), "%.0f");
        num_cell(h, json_object_get(p, "solve_minutes"), "%.3f");
        num_cell(h, json_object_get(p, "best_speedup"), "%.2fx");
        peak_cells(h, p);
        long long id = (long long)json_integer_value(json_object_get(p, "best_candidate"));
        sb_addf(h, "<td><a href=\"kernels/c%lld.html\">candidate %lld</a> (", id, id);
        esc(h, str(p, "best_verdict"));
        sb_adds(h, ")</td></tr>\n");
    }
    sb_adds(h, "</table>\n");
}

static void fast_p_table(strbuf *h, json_t *doc)
{
    sb_adds(h, "<table><tr><th>suite &middot; model</th><th>problems</th><th>fast_0</th>"
               "<th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>tokens in</th>"
               "<th>tokens out</th><th>cost</th></tr>\n");
    json_t *fp = json_object_get(doc, "fast_p"), *cost = json_object_get(doc, "cost");
    size_t i;
    json_t *g;
    json_array_foreach(fp, i, g)
    {
        json_t *v = json_object_get(g, "values"), *c = json_array_get(cost, i);
        sb_adds(h, "<tr><td>");
        esc(h, str(g, "group"));
        sb_addf(h, "</td><td class=\"n\">%lld</td>",
                (long long)json_integer_value(json_object_get(g, "problems")));
        static const char *const ks[] = {"0", "1", "1.5", "2"};
        for (int k = 0; k < 4; k++)
            sb_addf(h, "<td class=\"n\">%.1f%%</td>",
                    100 * json_number_value(json_object_get(v, ks[k])));
        sb_addf(h, "<td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>",
                json_number_value(json_object_get(c, "tokens_in")),
                json_number_value(json_object_get(c, "tokens_out")));
        if (json_is_number(json_object_get(c, "usd")))
            sb_addf(h, "<td class=\"n\">$%.4f (%s)</td></tr>\n",
                    json_number_value(json_object_get(c, "usd")), str(c, "usd_source"));
        else
            sb_adds(h, "<td>no price configured</td></tr>\n");
    }
    sb_adds(h, "</table>\n");
}

/* A count, or "-" where it was not measured (null). */
static void count_or_dash(strbuf *h, json_t *v)
{
    if (json_is_integer(v))
        sb_addf(h, "%lld", (long long)json_integer_value(v));
    else
        sb_adds(h, "-");
}

/* A metric@k cell: "-" where no problem has k samples, or nothing was measured. */
static void k_cell(strbuf *h, json_t *vals, const char *k, const char *fmt, double scale)
{
    json_t *v = json_object_get(vals, k);
    if (json_is_number(v))
        sb_addf(h, fmt, scale * json_number_value(v));
    else
        sb_adds(h, "<td class=\"n\">-</td>");
}

/* pass@k, fast_p@k and speedup@k per suite, model and strategy: the strategies of a suite and
 * model are adjacent rows, side by side. */
static void strategy_table(strbuf *h, json_t *metrics)
{
    static const char *const ks[] = {"1", "5", "10"};
    static const char *const ps[] = {"0", "1", "1.5", "2"};
    int strategies = 0;
    size_t i;
    json_t *g;
    json_array_foreach(metrics, i, g)
        strategies |= strcmp(str(g, "strategy"), "loop") ? 2 : 1;
    sb_addf(h, "<h2>%s</h2>\n<p>A sample is a trajectory; pass@k is the unbiased estimator "
               "1 - C(n-c,k)/C(n,k) per problem, averaged over the problems with n &ge; k; "
               "fast_p@k counts samples correct and faster than p x eager; speedup@k is the "
               "expected best eager speedup among k samples (0 for a sample with no correct "
               "kernel).</p>\n<table><tr><th>suite &middot; model</th><th>strategy</th>"
               "<th>problems (solved)</th><th>samples (correct)</th><th>turns per sample</th>",
            strategies == 3 ? "Strategies side by side: pass@k, fast_p@k, speedup@k"
                            : "pass@k, fast_p@k, speedup@k");
    for (int k = 0; k < 3; k++)
        sb_addf(h, "<th>pass@%s</th>", ks[k]);
    for (int p = 1; p < 4; p++)
        sb_addf(h, "<th>fast_%s@1</th>", ps[p]);
    for (int k = 0; k < 3; k++)
        sb_addf(h, "<th>speedup@%s</th>", ks[k]);
    sb_adds(h, "</tr>\n");
    int not_measured = 0;
    json_array_foreach(metrics, i, g)
    {
        sb_adds(h, "<tr><td>");
        esc(h, str(g, "suite"));
        sb_adds(h, " &middot; ");
        esc(h, str(g, "model"));
        sb_adds(h, "</td><td>");
        esc(h, str(g, "strategy"));
        if (json_is_true(json_object_get(g, "compile_only")))
            sb_adds(h, " (compile-only)");
        not_measured += !json_is_true(json_object_get(g, "measured"));
        sb_addf(h, "</td><td class=\"n\">%lld (", (long long)json_integer_value(json_object_get(g, "problems")));
        count_or_dash(h, json_object_get(g, "solved_problems"));
        sb_addf(h, ")</td><td class=\"n\">%lld (", (long long)json_integer_value(json_object_get(g, "samples")));
        count_or_dash(h, json_object_get(g, "solved_samples"));
        sb_addf(h, ")</td><td class=\"n\">%.2f</td>", json_number_value(json_object_get(g, "mean_turns")));
        for (int k = 0; k < 3; k++)
            k_cell(h, json_object_get(g, "pass_at_k"), ks[k], "<td class=\"n\">%.1f%%</td>", 100);
        json_t *fast = json_object_get(g, "fast_p_at_k");
        for (int p = 1; p < 4; p++)
            k_cell(h, json_object_get(fast, ps[p]), "1", "<td class=\"n\">%.1f%%</td>", 100);
        for (int k = 0; k < 3; k++)
            k_cell(h, json_object_get(g, "speedup_at_k"), ks[k], "<td class=\"n\">%.2fx</td>", 1);
        sb_adds(h, "</tr>\n");
    }
    sb_adds(h, "</table>\n");
    if (not_measured)
        sb_adds(h, "<p class=\"note\" id=\"not-measured\">Not measured (-): nothing of a "
                   "compile-only run was run on a GPU. Its kernels only compiled, so whether they "
                   "are correct or fast is unknown, and pass@k, fast_p@k, speedup@k and the counts "
                   "of correct samples are left out, not 0.</p>\n");
}

static void link_cell(strbuf *h, json_t *id)
{
    if (json_is_integer(id))
        sb_addf(h, "<td><a href=\"kernels/c%lld.html\">%lld</a></td>",
                (long long)json_integer_value(id), (long long)json_integer_value(id));
    else
        sb_adds(h, "<td>-</td>");
}

static void flips_section(strbuf *h, json_t *flips)
{
    json_t *list = json_object_get(flips, "flips");
    sb_addf(h, "<p>%zu label flips over %lld re-verified candidates (%lld consecutive pairs "
               "compared); rules in docs/AUDIT.md.</p>\n", json_array_size(list),
            (long long)json_integer_value(json_object_get(flips, "candidates_reverified")),
            (long long)json_integer_value(json_object_get(flips, "pairs_compared")));
    sb_adds(h, "<table id=\"flips\"><tr><th>problem</th><th>candidate</th><th>kind</th>"
               "<th>before</th><th>after</th><th>detail</th></tr>\n");
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f)
    {
        sb_adds(h, "<tr><td>");
        esc(h, str(f, "problem_id"));
        sb_adds(h, "</td>");
        link_cell(h, json_object_get(f, "candidate_id"));
        const char *cols[] = {"kind", "before", "after", "detail"};
        for (int k = 0; k < 4; k++) {
            sb_adds(h, "<td>");
            esc(h, str(f, cols[k]));
            if (k == 1 && *str(f, "before_verifier") && !json_is_integer(json_object_get(f, "before_id")))
                sb_adds(h, " ("), esc(h, str(f, "before_verifier")), sb_adds(h, ")");
            sb_adds(h, "</td>");
        }
        sb_adds(h, "</tr>\n");
    }
    sb_adds(h, "</table>\n<h3>Third-party claims</h3>\n<table id=\"claims\"><tr><th>source</th>"
               "<th>records</th><th>&ldquo;correct&rdquo; claims</th><th>hold</th>"
               "<th>speedup claims</th><th>hold within 10%</th><th>not verified</th></tr>\n");
    json_array_foreach(json_object_get(flips, "claims"), i, f)
    {
        sb_adds(h, "<tr><td>");
        esc(h, str(f, "source"));
        sb_adds(h, "</td>");
        const char *cols[] = {"records", "correct_claims", "correct_claims_hold", "speedup_claims",
                              "speedup_claims_hold_10pct", "not_verified"};
        for (int k = 0; k < 6; k++)
            sb_addf(h, "<td class=\"n\">%lld</td>",
                    (long long)json_integer_value(json_object_get(f, cols[k])));
        sb_adds(h, "</tr>\n");
    }
    sb_adds(h, "</table>\n");
}

static void suspicious_section(strbuf *h, json_t *list)
{
    sb_addf(h, "<p>%zu kernels to look at (flagged by the verifier, above 10x eager, or "
               "nondeterministic).</p>\n<table id=\"suspicious\"><tr><th>candidate</th>"
               "<th>problem</th><th>verdict</th><th>flags</th><th>eager speedup</th>"
               "<th>reason</th></tr>\n", json_array_size(list));
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s)
    {
        sb_adds(h, "<tr>");
        link_cell(h, json_object_get(s, "candidate_id"));
        const char *cols[] = {"problem_id", "verdict", "flags"};
        for (int k = 0; k < 3; k++)
            sb_adds(h, "<td>"), esc(h, str(s, cols[k])), sb_adds(h, "</td>");
        num_cell(h, json_object_get(s, "speedup_eager"), "%.2fx");
        sb_adds(h, "<td>"), esc(h, str(s, "reason")), sb_adds(h, "</td></tr>\n");
    }
    sb_adds(h, "</table>\n");
}

static void index_html(strbuf *h, json_t *doc, const strbuf *chartjs)
{
    json_t *db = json_object_get(doc, "database");
    sb_addf(h, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<title>kcorpus report</title><style>%s</style></head>\n"
               "<body data-status=\"loading\" data-charts=\"0\">\n<h1>kcorpus report</h1>\n"
               "<p>%lld problems, %lld candidates, %lld turns, %lld verifications.", style,
            (long long)json_integer_value(json_object_get(db, "problems")),
            (long long)json_integer_value(json_object_get(db, "candidates")),
            (long long)json_integer_value(json_object_get(db, "turns")),
            (long long)json_integer_value(json_object_get(db, "verifications")));
    if (json_is_number(json_object_get(doc, "problem_budget_minutes")))
        sb_addf(h, " Budget per problem: %g minutes.",
                json_number_value(json_object_get(doc, "problem_budget_minutes")));
    sb_adds(h, " A problem is solved by a correct kernel (a compiled one in compile-only runs). "
               "Charts drawn with Chart.js 3 (Debian libjs-chart.js), inlined.</p>\n"
               "<h2>Solve rate against budget</h2><div class=\"grid\">\n");
    chart_box(h, "solve_minutes", "Solve rate vs minutes per problem",
              "one curve per suite and model; the problem's clock at the end of its first solving turn");
    chart_box(h, "solve_turns", "Solve rate vs turns", "solved within the first N turns of any sample");
    sb_adds(h, "</div>\n<h2>Speed and verdicts</h2><div class=\"grid\">\n");
    chart_box(h, "fast_p", "KernelBench fast_p", "share of problems with a correct kernel faster than p x eager");
    chart_box(h, "verdict_mix", "Verdict mix per turn", NULL);
    chart_box(h, "speedup_hist", "Speedup over PyTorch eager", "log2 bins");
    chart_box(h, "roofline_hist", "Roofline fraction",
              "bytes/FLOPs from the manifest; DRAM peak, and FP32 CUDA-core peak (f32/f64 problems) "
              "or dense tensor-core peak (f16/bf16 problems)");
    chart_box(h, "cost", "Cost (tokens)", NULL);
    sb_adds(h, "</div>\n");
    fast_p_table(h, doc);
    strategy_table(h, json_object_get(doc, "metrics"));
    sb_adds(h, "<h2>Problems</h2>\n");
    problem_table(h, json_object_get(doc, "problems"));
    sb_adds(h, "<h2>Label flips</h2>\n");
    flips_section(h, json_object_get(doc, "flips"));
    sb_adds(h, "<h2>Suspicious</h2>\n");
    suspicious_section(h, json_object_get(doc, "suspicious"));
    sb_adds(h, "<script>\n");
    sb_add(h, chartjs->buf, chartjs->len);
    sb_adds(h, "\n</script>\n<script type=\"application/json\" id=\"kc-data\">");
    char *data = json_dumps(doc, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(8));
    sb_adds(h, data);
    free(data);
    sb_addf(h, "</script>\n<script>\n%s</script>\n</body></html>\n", page_script);
}

/* ---- kernel pages ---- */

static void pre_blob(sqlite3 *db, strbuf *h, const char *title, const char *sha)
{
    if (!sha)
        return;
    strbuf text = STRBUF_INIT;
    if (kc_blob_get(db, sha, &text, NULL) == 0 && text.len) {
        sb_addf(h, "<h2>%s</h2><pre>", title);
        esc(h, sb_str(&text));
        sb_adds(h, "</pre>\n");
    }
    sb_free(&text);
}

static const char *ctext(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : NULL;
}

static void verifications_table(sqlite3 *db, strbuf *h, long long id)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "SELECT v.id, v.verdict, v.flags, coalesce(v.message, ''), coalesce(v.verifier_version, ''),"
        " coalesce(v.gpu_name, ''), coalesce(v.driver_version, ''), tm.median_ms, tm.stdev_ms, tm.n,"
        " tm.speedup_eager, coalesce(v.evidence_json, ''), v.reverify_pass"
        " FROM verifications v LEFT JOIN timings tm ON tm.verification_id = v.id"
        " WHERE v.candidate_id = ? ORDER BY v.id", NULL);
    if (!st)
        return;
    sqlite3_bind_int64(st, 1, id);
    sb_adds(h, "<h2>Verifications (oldest first)</h2><table><tr><th>id</th><th>verdict</th>"
               "<th>flags</th><th>message</th><th>verifier</th><th>GPU</th><th>driver</th>"
               "<th>median ms (stdev, n)</th><th>eager speedup</th><th>reverify pass</th></tr>\n");
    strbuf evidence = STRBUF_INIT;
    while (sqlite3_step(st) == SQLITE_ROW) {
        sb_addf(h, "<tr><td>%lld</td>", (long long)sqlite3_column_int64(st, 0));
        for (int k = 1; k <= 6; k++)
            sb_adds(h, "<td>"), esc(h, ctext(st, k)), sb_adds(h, "</td>");
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            sb_addf(h, "<td>%.4f (%.4f, %d)</td>", sqlite3_column_double(st, 7),
                    sqlite3_column_double(st, 8), sqlite3_column_int(st, 9));
        else
            sb_adds(h, "<td>-</td>");
        if (sqlite3_column_type(st, 10) != SQLITE_NULL)
            sb_addf(h, "<td>%.3fx</td>", sqlite3_column_double(st, 10));
        else
            sb_adds(h, "<td>-</td>");
        sb_addf(h, "<td>%s</td></tr>\n", ctext(st, 12) ? ctext(st, 12) : "-");
        sb_reset(&evidence);
        sb_adds(&evidence, ctext(st, 11));
    }
    sqlite3_finalize(st);
    sb_adds(h, "</table>\n");
    if (evidence.len) {
        sb_adds(h, "<h2>Verdict evidence (latest verification)</h2><pre>");
        json_t *j = json_loads(evidence.buf, 0, NULL);
        char *pretty = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        esc(h, pretty ? pretty : evidence.buf);
        free(pretty);
        json_decref(j);
        sb_adds(h, "</pre>\n");
    }
    sb_free(&evidence);
}

static int kernel_page(sqlite3 *db, long long id, strbuf *h, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "SELECT c.problem_id, c.origin, c.source_sha, t.feedback_sha, t.turn_index,"
        " t.trajectory_id, cp.log_sha, cl.source, cl.claimed_correct, cl.claimed_speedup,"
        " (SELECT tr.status = 'done' AND NOT EXISTS (SELECT 1 FROM turns t2 WHERE t2.trajectory_id"
        "   = t.trajectory_id AND t2.turn_index > t.turn_index) FROM trajectories tr"
        "   WHERE tr.id = t.trajectory_id)"
        " FROM candidates c LEFT JOIN turns t ON t.candidate_id = c.id"
        " LEFT JOIN compiles cp ON cp.id = (SELECT max(id) FROM compiles WHERE candidate_id = c.id)"
        " LEFT JOIN third_party_claims cl ON cl.candidate_id = c.id WHERE c.id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return kc_fail(err, "no candidate %lld", id);
    }
    sb_addf(h, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>candidate "
               "%lld</title><style>%s</style></head><body>\n<p><a href=\"../index.html\">report"
               "</a></p><h1>Candidate %lld: ", id, style, id);
    esc(h, ctext(st, 0));
    sb_adds(h, "</h1>\n<p>origin ");
    esc(h, ctext(st, 1));
    if (sqlite3_column_type(st, 4) != SQLITE_NULL)
        sb_addf(h, ", trajectory %lld, turn %d (counting from 1)",
                (long long)sqlite3_column_int64(st, 5), sqlite3_column_int(st, 4) + 1);
    if (ctext(st, 7)) {
        sb_adds(h, "; third-party claim by ");
        esc(h, ctext(st, 7));
        sb_addf(h, ": correct %s, speedup %s",
                sqlite3_column_type(st, 8) == SQLITE_NULL ? "not claimed"
                : sqlite3_column_int(st, 8)               ? "yes"
                                                          : "no",
                ctext(st, 9) ? ctext(st, 9) : "not claimed");
    }
    sb_adds(h, "</p>\n");
    verifications_table(db, h, id);
    pre_blob(db, h, "Kernel", ctext(st, 2));
    /* the last turn of an ended trajectory: its feedback was written, never sent */
    pre_blob(db, h, sqlite3_column_int(st, 10) ? "Feedback (not sent: the trajectory ended with this turn)"
                                               : "Feedback sent to the model", ctext(st, 3));
    pre_blob(db, h, "Compile log", ctext(st, 6));
    sb_adds(h, "</body></html>\n");
    sqlite3_finalize(st);
    return 0;
}

static int write_text(const char *dir, const char *name, const strbuf *text, strbuf *err)
{
    strbuf path = STRBUF_INIT;
    path_join(&path, dir, name);
    int rc = write_file_atomic(path.buf, text->buf, text->len, err);
    sb_free(&path);
    return rc;
}

static int kernel_pages(sqlite3 *db, const char *dir, json_t *doc, strbuf *err)
{
    strbuf kdir = STRBUF_INIT, h = STRBUF_INIT, name = STRBUF_INIT;
    path_join(&kdir, dir, "kernels");
    int rc = mkdir_p(kdir.buf, err);
    json_t *ids = json_copy(json_object_get(doc, "kernels"));
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(doc, "flips"), "flips"), i, f)
        json_array_append(ids, json_object_get(f, "candidate_id"));
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        if (rc)
            break;
        sb_reset(&h), sb_reset(&name);
        sb_addf(&name, "c%lld.html", (long long)json_integer_value(id));
        rc = kernel_page(db, (long long)json_integer_value(id), &h, err) ||
             write_text(kdir.buf, name.buf, &h, err);
    }
    json_decref(ids);
    sb_free(&kdir), sb_free(&h), sb_free(&name);
    return rc ? -1 : 0;
}

int report_write(sqlite3 *db, const report_options *o, strbuf *err)
{
    strbuf chartjs = STRBUF_INIT, h = STRBUF_INIT, js = STRBUF_INIT;
    const char *cj = o->chartjs_path ? o->chartjs_path : REPORT_CHARTJS_DEFAULT;
    if (read_file(cj, &chartjs, err)) {
        kc_fail(err, "Chart.js not found at %s: install Debian's libjs-chart.js (make deps) or "
                     "give --chartjs FILE", cj);
        sb_free(&chartjs);
        return -1;
    }
    if (strstr(chartjs.buf, "</script")) {
        sb_free(&chartjs);
        return kc_fail(err, "%s contains '</script' and cannot be inlined", cj);
    }
    json_t *doc = report_data(db, o, err);
    int rc = doc ? mkdir_p(o->out_dir, err) : -1;
    if (rc == 0) {
        index_html(&h, doc, &chartjs);
        char *s = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
        sb_adds(&js, s);
        sb_addch(&js, '\n');
        free(s);
        rc = write_text(o->out_dir, "index.html", &h, err) ||
             write_text(o->out_dir, "report.json", &js, err) || kernel_pages(db, o->out_dir, doc, err)
                 ? -1 : 0;
    }
    json_decref(doc);
    sb_free(&chartjs), sb_free(&h), sb_free(&js);
    return rc;
}
