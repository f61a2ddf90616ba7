/* sw_html.h: the one page frame of every HTML page the coordinator renders: the report
 * (sw_report.h), the Pareto page (sw_pareto.h) and the live dashboard (sw_http.h).
 *
 * A page is self-contained: it carries its data as JSON in <script type="application/json">
 * elements and the scripts that draw it, so it can be mailed, archived and opened offline on
 * another machine than the one that made it. The scripts are embedded in the executables at
 * build time (read/read.cmake, cmake/embed_asset.cmake), never read at run time:
 *   Chart.js 3.9.1 (MIT licence; Debian 12's libjs-chart.js, pinned by sha256) draws every chart;
 *   read/web/sw_charts.js turns report and Pareto JSON into Chart.js charts with captions
 *     (window.swCharts.report(data), .sweep(sweep, element), .pareto(data, element)).
 * Usage: sw_html_begin, the page's body, sw_html_data for each data element, sw_html_end. */
#ifndef SW_HTML_H
#define SW_HTML_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"

/* Writes s (NULL: nothing) with <, >, & and " escaped, for element text and attribute values. */
void sw_html_escape(FILE *out, const char *s);

/* Writes JSON text for the inside of a <script type="application/json"> element: every "</"
 * becomes "<\/" (the same JSON value), so no string in the data, such as a sweep name, can
 * close the element early. */
void sw_html_json(FILE *out, const char *json);

/* Opens a page: doctype, <head> with title (escaped), the shared style sheet, Chart.js and
 * sw_charts.js inlined, then <body>. */
void sw_html_begin(FILE *out, const char *title);

/* Writes data as <script type="application/json" id="ID">. Returns 0 or SW_ENOMEM. */
int sw_html_data(FILE *out, const char *id, const json_t *data, struct sw_err *err);

/* Writes an embedded script asset (len bytes of text, trusted) inside <script></script>. */
void sw_html_script(FILE *out, const char *text, size_t len);

/* Writes <script>CODE</script> for one inline call (code is trusted text from the caller). */
void sw_html_inline(FILE *out, const char *code);

/* Closes the page. */
void sw_html_end(FILE *out);

/* The embedded Chart.js's version ("3.9.1"). */
const char *sw_html_chartjs_version(void);

#endif
