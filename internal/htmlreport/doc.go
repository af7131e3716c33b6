// Package htmlreport writes a verdict.Verdict as one self-contained HTML page:
// the verdict in the words of the text report, a propagation picture (ranks
// down, steps and the collectives of the origin step across), the origin
// rank's timeline around the root op, the module chain and the user's code,
// and every list the verdict holds (candidates, spread, calls not counted as
// origins, recovered steps, warnings, next steps).
//
// The page needs no network: its stylesheet, its script and a trimmed build
// of Apache ECharts (assets/, see assets/README.md) are inlined, and the
// data is embedded once, as JSON in a <script type="application/json">
// element holding the verdict unchanged next to what the page derives from
// it. Everything but the picture is also written as plain HTML, so the page
// reads without scripts too.
//
// The page is a function of the verdict alone: it reads no file. The
// timeline is the calls the analysis read from the origin rank's dump.json
// (verdict.Origin.Timeline, with their statistics and phases); a verdict
// without them (joined from summaries, or written before schema revision 2)
// shows its own record of the root op instead.
//
// It imports verdict, internal/report (the words of the text report),
// internal/notation (rank lists, entry names, library files) and
// internal/nonfinite.
//
// May import: internal/nonfinite, internal/notation, internal/report, verdict.
package htmlreport
