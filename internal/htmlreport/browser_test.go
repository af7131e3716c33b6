package htmlreport

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/internal/synth"
)

var update = flag.Bool("update", false, "rewrite docs/report-bwd-sqrt-zero.png (the README shows it)")

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("headless browser tests need %s (Debian package chromium; .ci/run installs it): %v", chromiumPath, err)
	}
	return chromiumPath
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// pageStatus is what the page wrote about itself once its script ran.
type pageStatus struct {
	rendered string
	pixels   int
	rows     int
	filtered int
	errors   string
	dom      string
}

var (
	statusDiv = regexp.MustCompile(`<div id="nh-status"[^>]*>`)
	attr      = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
	errorsPre = regexp.MustCompile(`(?s)<pre id="nh-errors"[^>]*>(.*?)</pre>`)
)

// loadPage writes the verdict's page and loads it in the browser.
func loadPage(t *testing.T, b *browser, v *verdict.Verdict, opt Options, fragment string, shot bool, then func(*tab) error) (string, pageStatus, []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, v, opt); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	got, err := b.loadThen(ctx, "file://"+file+fragment, 1400, shot, then)
	if err != nil {
		t.Fatalf("%v\n%s", err, lastLines(b.stderr.String(), 10))
	}
	st := pageStatus{dom: got.dom, errors: strings.Join(got.problems, "\n")}
	div := statusDiv.FindString(got.dom)
	if div == "" {
		t.Fatalf("no status element in the rendered page:\n%s", lastLines(got.dom, 10))
	}
	for _, m := range attr.FindAllStringSubmatch(div, -1) {
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "rendered":
			st.rendered = m[2]
		case "chart-pixels":
			st.pixels = n
		case "rows":
			st.rows = n
		case "filtered":
			st.filtered = n
		}
	}
	if m := errorsPre.FindStringSubmatch(got.dom); m != nil && strings.TrimSpace(m[1]) != "" {
		st.errors += "\n" + strings.TrimSpace(m[1])
	}
	st.errors = strings.TrimSpace(st.errors)
	return file, st, got.screenshot
}

// domText escapes text the way the browser serialises it.
func domText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(s)
}

func checkRendered(t *testing.T, v *verdict.Verdict, st pageStatus, minPixels int) {
	t.Helper()
	if st.errors != "" {
		t.Errorf("the page reported errors:\n%s", st.errors)
	}
	if st.rendered != "ok" {
		t.Errorf("the page did not finish rendering: data-rendered=%q", st.rendered)
	}
	if st.pixels < minPixels {
		t.Errorf("the propagation chart painted %d pixels, want at least %d", st.pixels, minPixels)
	}
	if minPixels > 0 && !strings.Contains(st.dom, "<canvas") {
		t.Errorf("no canvas in the rendered page")
	}
	headline := report.Summary(v)[0]
	if !strings.Contains(st.dom, domText(headline)) {
		t.Errorf("the rendered page lacks the verdict %q", headline)
	}
	if o := v.Origin; o != nil {
		cell := st.dom[strings.Index(st.dom, `id="nh-cell"`):]
		cell = cell[:strings.Index(cell, "</div>")]
		if !strings.Contains(cell, domText(o.Op)) {
			t.Errorf("the cell details do not show the origin op %s:\n%s", o.Op, cell)
		}
	}
}

// cellDetails is the details panel of the rendered page.
func cellDetails(dom string) string {
	i := strings.Index(dom, `id="nh-cell"`)
	if i < 0 {
		return ""
	}
	cell := dom[i:]
	if j := strings.Index(cell, "</div>"); j >= 0 {
		cell = cell[:j]
	}
	return cell
}

// rowOf is the table row of the rendered page that starts with prefix.
func rowOf(dom, prefix string) string {
	i := strings.Index(dom, prefix)
	if i < 0 {
		return ""
	}
	row := dom[i:]
	if j := strings.Index(row, "</tr>"); j >= 0 {
		row = row[:j]
	}
	return row
}

// bigRun generates a run of 1,024 ranks kept small in bytes (one dumped
// step, one layer, tiny tensors: about 100 MB), with one damaged file.
func bigRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	spec := synth.Spec{Name: "browser-1024", Ranks: 1024, Steps: []int{1}, Model: synth.Dense, Layers: 1, Hidden: 8,
		Batch: 1, Seq: 4, Vocab: 16, Level: "L1", Seed: 5,
		Fault:  &synth.Fault{Kind: synth.ExpOverflow, Step: 1, Ranks: []int{517}},
		Damage: []synth.Damage{{Step: 1, Rank: 1000, TruncateAt: 0.5}}}
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHTMLBrowser renders real and generated verdicts in one headless
// Chromium, driven over the DevTools protocol, and checks each page: no
// exception, console error or failed load, the verdict and the origin op in
// the DOM, a propagation chart that painted. With -update it also writes
// docs/report-bwd-sqrt-zero.png, which the README shows.
func TestHTMLBrowser(t *testing.T) {
	path := chromium(t)
	fx := fixtures(t)
	gen := filepath.Join(fx, "msprobe-generated")
	start := time.Now()
	b, err := startBrowser(path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	cases := []struct {
		name     string
		dump     func(t *testing.T) string
		verdict  func(t *testing.T) *verdict.Verdict // instead of a dump
		fragment string
		noChart  bool // nothing to draw
		then     func(t *testing.T) func(*tab) error
		check    func(t *testing.T, v *verdict.Verdict, st pageStatus)
	}{
		{name: "bwd-sqrt-zero-L1", dump: func(*testing.T) string { return filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1") },
			then: clickReceiver,
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				if !strings.Contains(st.dom, "Tensor.sum.0.backward") {
					t.Errorf("the origin timeline read from the dump is missing")
				}
				// the step after the origin was read until it showed that the
				// anomaly lasts: its cells and the legend say so, not "not read"
				checked := v.Scanned.CheckedNext
				if checked == nil {
					t.Fatalf("the verdict checked no next step")
				}
				for _, c := range buildGrid(v).Cols {
					if c.Step == *checked && c.Cells != string(rune(cellChecked)) {
						t.Errorf("step %d's cells are %q, want all %q", c.Step, c.Cells, string(rune(cellChecked)))
					}
				}
				if !strings.Contains(st.dom, "read until the anomaly showed again") {
					t.Errorf("the legend does not name the checked step's cells")
				}
			}},
		{name: "realrun-fp16-two-groups", dump: func(t *testing.T) string { return filepath.Join(realruns.Dir(t, "fp16-allreduce-two-groups"), "L1") },
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				// the birth: every source rank of a tie, in the details shown first
				cell := cellDetails(st.dom)
				if v.Origin == nil || len(v.Origin.Ranks) < 2 {
					t.Fatalf("the run's verdict is no tie: %+v", v.Origin)
				}
				for _, r := range v.Origin.Ranks {
					if !strings.Contains(cell, "<tr><td>"+strconv.Itoa(r)+"</td>") {
						t.Errorf("the birth details lack source rank %d:\n%s", r, cell)
					}
				}
			}},
		{name: "realrun-custom-bwd-kernel", dump: func(t *testing.T) string { return filepath.Join(realruns.Dir(t, "custom-bwd-kernel"), "L1") },
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				// one stage per entry: the timeline's label of the root call is
				// the phase the verdict gives it, not its name's direction
				o := v.Origin
				if o == nil || o.Stage != "backward" {
					t.Fatalf("origin %+v, want a backward stage", o)
				}
				row := rowOf(st.dom, `<tr class="call call-root" data-op="`+o.Op+`"`)
				if row == "" || !strings.Contains(row, `<div class="muted small">`+o.Phase+`</div>`) {
					t.Errorf("the timeline's root row does not say %q:\n%s", o.Phase, row)
				}
			}},
		{name: "bwd-sqrt-zero-mix", dump: func(*testing.T) string { return filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "mix") },
			fragment: "#filter=all_reduce",
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				if st.filtered == 0 || !strings.Contains(st.dom, `<tr class="call call-root filtered-out"`) {
					t.Errorf("#filter=all_reduce hid %d rows, and not the root call's", st.filtered)
				}
			}},
		{name: "fwd-log-neg-L1", dump: func(*testing.T) string { return filepath.Join(gen, "fwd-log-neg-rank2-step5", "L1") }},
		{name: "resnet-clean", dump: func(*testing.T) string { return filepath.Join(fx, "msprobe-real", "gpu-resnet50-mix-2steps") },
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				if v.Anomaly || !strings.Contains(st.dom, "no anomaly") {
					t.Errorf("the clean run's page does not say so")
				}
			}},
		{name: "synth-1024-ranks", dump: bigRun,
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				if st.rows == 0 || st.rows > 64 {
					t.Errorf("%d rows for 1,024 ranks, want 1-64", st.rows)
				}
			}},
		{name: "synthetic-1024x100", verdict: func(*testing.T) *verdict.Verdict { return syntheticVerdict(1024, 100) }, then: oneRankPerRow},
		{name: "evidence-only", noChart: true, verdict: func(t *testing.T) *verdict.Verdict { return readVerdict(t, "verdict_evidence-only.json") },
			check: func(t *testing.T, v *verdict.Verdict, st pageStatus) {
				if strings.Contains(st.dom, `id="nh-chart"`) {
					t.Errorf("a verdict without a dump drew a picture")
				}
			}},
	}
	t.Run("pages", func(t *testing.T) {
		t.Run("protocol-sees-errors", func(t *testing.T) {
			t.Parallel()
			checkProtocol(t, b)
		})
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				begin := time.Now()
				var v *verdict.Verdict
				opt := Options{}
				if c.dump != nil {
					v = traceDump(t, c.dump(t))
				} else {
					v = c.verdict(t)
				}
				shot := c.name == "bwd-sqrt-zero-L1" && *update
				var then func(*tab) error
				if c.then != nil {
					then = c.then(t)
				}
				file, st, png := loadPage(t, b, v, opt, c.fragment, shot, then)
				minPixels := 5000
				if c.noChart {
					minPixels = 0
				}
				checkRendered(t, v, st, minPixels)
				if c.check != nil {
					c.check(t, v, st)
				}
				info, _ := os.Stat(file)
				t.Logf("%d KiB page, %d chart pixels, %d rows, %.1fs", info.Size()>>10, st.pixels, st.rows, time.Since(begin).Seconds())
				if shot {
					if err := os.WriteFile(filepath.Join("..", "..", "docs", "report-bwd-sqrt-zero.png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	})
	t.Logf("browser tests: %.1fs", time.Since(start).Seconds())
}

// clickReceiver clicks rank 0's cell in the carrier's column, as a user
// would, and checks that the details name the collective that reached it.
func clickReceiver(t *testing.T) func(*tab) error {
	return func(p *tab) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		raw, err := p.eval(ctx, `(function () {
			var g = window.nanhunt.grid, ci = -1;
			g.cols.forEach(function (c, i) { if (c.carrier) { ci = i; } });
			var ri = window.nanhunt.rows().findIndex(function (r) { return g.ranks[r.start] === 0; });
			var dom = window.nanhunt.chart.getDom();
			dom.scrollIntoView();
			var at = window.nanhunt.chart.convertToPixel({seriesId: 'cells'}, [ci, ri]);
			var box = dom.getBoundingClientRect();
			return [box.left + at[0], box.top + at[1]];
		})()`)
		if err != nil {
			return err
		}
		var xy [2]float64
		if err := json.Unmarshal(raw, &xy); err != nil {
			return err
		}
		if err := p.click(ctx, xy[0], xy[1]); err != nil {
			return err
		}
		raw, err = p.eval(ctx, `document.getElementById('nh-cell').innerText`)
		if err != nil {
			return err
		}
		var text string
		json.Unmarshal(raw, &text)
		if !strings.Contains(text, "rank 0") || !strings.Contains(text, "Distributed.all_reduce.1.forward") || !strings.Contains(text, "received") {
			t.Errorf("after a click on rank 0 in the carrier's column, the details read:\n%s", text)
		}
		return nil
	}
}

// oneRankPerRow switches the picture of 1,024 ranks to one rank per row,
// as the "ranks per row" menu does, and checks it redrew in time.
func oneRankPerRow(t *testing.T) func(*tab) error {
	return func(p *tab) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		raw, err := p.eval(ctx, `(function () {
			var sel = document.getElementById('nh-bucket'), t0 = performance.now();
			sel.value = '1';
			sel.dispatchEvent(new Event('change'));
			return [window.nanhunt.rows().length, performance.now() - t0];
		})()`)
		if err != nil {
			return err
		}
		var got [2]float64
		if err := json.Unmarshal(raw, &got); err != nil {
			return err
		}
		t.Logf("one rank per row: %.0f rows drawn in %.0f ms", got[0], got[1])
		if got[0] != 1024 {
			t.Errorf("%.0f rows at one rank per row, want 1024", got[0])
		}
		return nil
	}
}
