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
// When Options.DumpPath is set, the origin rank's dump.json of the origin
// step is streamed (entries before the root op are skipped unparsed, reading
// stops at the first collective after it) to show each call's statistics; a
// missing or damaged file is a warning on the page, never an error.
//
// It imports verdict, internal/report (the words of the text report),
// internal/safeio, internal/intranges, dump, internal/entryat and
// policy (to read the origin rank's calls again), internal/nonfinite and
// trace (their tensor rows).
package htmlreport
