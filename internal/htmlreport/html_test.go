package htmlreport

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/report"
)

func readVerdict(t *testing.T, name string) *verdict.Verdict {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v verdict.Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &v
}

func render(t *testing.T, v *verdict.Verdict, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, v, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var dataBlock = regexp.MustCompile(`(?s)<script type="application/json" id="nh-data">(.*?)</script>`)

// embedded returns the page's data block, parsed.
func embedded(t *testing.T, page string) (raw []byte, data struct {
	Verdict  json.RawMessage `json:"verdict"`
	Summary  []string        `json:"summary"`
	Grid     *Grid           `json:"grid"`
	Timeline *Timeline       `json:"timeline"`
}) {
	t.Helper()
	m := dataBlock.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("want one data block, found %d", len(m))
	}
	raw = []byte(m[0][1])
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatalf("the data block is not JSON: %v", err)
	}
	return raw, data
}

// sameVerdict compares verdicts through their JSON (NaN statistics compare
// unequal as numbers).
func sameVerdict(t *testing.T, got json.RawMessage, want *verdict.Verdict) {
	t.Helper()
	var v verdict.Verdict
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("the embedded verdict does not parse: %v", err)
	}
	a, _ := json.Marshal(&v)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Errorf("the embedded verdict differs from the one written:\n got %s\nwant %s", a, b)
	}
}

var externalRef = regexp.MustCompile(`(?i)(src|href|action|poster|data)\s*=\s*["']?\s*(https?:)?//`)

func TestHTMLStructure(t *testing.T) {
	for _, name := range []string{"verdict_bwd-sqrt-zero-L1.json", "verdict_sendrecv-carrier.json", "verdict_optimizer-nan-fused.json",
		"verdict_resnet-clean.json", "verdict_evidence.json", "verdict_evidence-only.json"} {
		t.Run(name, func(t *testing.T) {
			v := readVerdict(t, name)
			page := render(t, v, Options{})
			if !strings.HasPrefix(page, "<!DOCTYPE html>") {
				t.Errorf("the page does not start with a doctype")
			}
			// the verdict, in the text report's words
			for _, line := range report.Summary(v) {
				if !strings.Contains(page, html.EscapeString(line)) {
					t.Errorf("the page lacks the verdict line %q", line)
				}
			}
			if v.Origin != nil && !strings.Contains(page, `<code class="op">`+html.EscapeString(v.Origin.Op)+`</code>`) {
				t.Errorf("the page does not show the origin op %s", v.Origin.Op)
			}
			raw, data := embedded(t, page)
			sameVerdict(t, data.Verdict, v)
			if bytes.Contains(raw, []byte("<")) {
				t.Errorf("the data block holds a raw '<'")
			}
			// the vendored chart library is checked once, in TestHTMLChartLibrary
			if m := externalRef.FindString(strings.Replace(page, echartsJS, "", 1)); m != "" {
				t.Errorf("the page refers to something outside it: %q", m)
			}
			if strings.Contains(page, "<script src") || strings.Contains(page, "<link") {
				t.Errorf("the page loads a script or a stylesheet from elsewhere")
			}
			if v.Evidence != nil {
				for _, c := range v.Evidence.Contradictions {
					if !strings.Contains(page, html.EscapeString(c)) {
						t.Errorf("the page lacks the contradiction %q", c)
					}
				}
			}
			if v.Plan != nil && !strings.Contains(page, "msprobe config.json") {
				t.Errorf("the page lacks the plan's config")
			}
		})
	}
}

// TestHTMLEscapesHostileNames writes entry names that would end the script
// element or open markup, and checks they stay text.
func TestHTMLEscapesHostileNames(t *testing.T) {
	v := readVerdict(t, "verdict_bwd-sqrt-zero-L1.json")
	hostile := `Torch.x</script><script>alert(1)</script><!--.0.forward`
	v.Origin.Op = hostile
	v.Candidates[2].Op = hostile
	v.Steps[5].Anomalous[2].Op = hostile
	v.Warnings = append(v.Warnings, verdict.Warning{File: `/d/<b>x</b>`, Message: `"quoted" & <i>tagged</i>` + "\u2028"})
	page := render(t, v, Options{})
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>x</b>") || strings.Contains(page, "<i>tagged") {
		t.Fatalf("a name was written as markup")
	}
	if n := strings.Count(page, "</script>"); n != 4 {
		t.Errorf("%d script ends, want 4 (error hook, data, chart library, page script)", n)
	}
	_, data := embedded(t, page)
	sameVerdict(t, data.Verdict, v)
}

func TestHTMLCleanVerdict(t *testing.T) {
	v := readVerdict(t, "verdict_resnet-clean.json")
	page := render(t, v, Options{})
	for _, want := range []string{"no anomaly", "nanhunt: no NaN or Inf in steps 0,1 (rank 0).", `id="propagation"`} {
		if !strings.Contains(page, want) {
			t.Errorf("clean page lacks %q", want)
		}
	}
	for _, absent := range []string{`id="timeline"`, `id="code"`, `id="spread"`} {
		if strings.Contains(page, absent) {
			t.Errorf("clean page has %s", absent)
		}
	}
}

func TestHTMLUncapturedOrigin(t *testing.T) {
	v := readVerdict(t, "verdict_optimizer-nan-fused.json")
	page := render(t, v, Options{})
	for _, want := range []string{"was made by the update at the end of step 2", "reads weights that already held it when step 3 began",
		// the stage fact says where it was made and where it was first seen
		"made by the update at the end of step 2, first seen in " + v.Origin.Op,
		// plain words, not the JSON field
		"origin in the dump"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, ">captured<") {
		t.Errorf("the page calls the origin \"captured\"")
	}
}

// TestHTMLReportSizes keeps the pages small: the chart library is most of a
// small page, and a large run adds its verdict once.
func TestHTMLReportSizes(t *testing.T) {
	for _, c := range []struct {
		name         string
		v            *verdict.Verdict
		max          int
		ranks, steps int
	}{
		{"fixture", readVerdict(t, "verdict_bwd-sqrt-zero-L1.json"), 700 << 10, 4, 8},
		{"32x10", syntheticVerdict(32, 10), 800 << 10, 32, 10},
		{"1024x100", syntheticVerdict(1024, 100), 2 << 20, 1024, 100},
	} {
		page := render(t, c.v, Options{})
		t.Logf("%s: %d bytes (%.0f KiB), chart library %d KiB", c.name, len(page), float64(len(page))/1024, len(echartsJS)>>10)
		if len(page) > c.max {
			t.Errorf("%s: page of %d bytes, want at most %d", c.name, len(page), c.max)
		}
		_, data := embedded(t, page)
		if len(data.Grid.Ranks) != c.ranks {
			t.Errorf("%s: %d ranks in the picture, want %d", c.name, len(data.Grid.Ranks), c.ranks)
		}
	}
}

// TestHTMLChartLibrary checks the vendored chart library: the build the
// README describes, loading nothing from the network.
func TestHTMLChartLibrary(t *testing.T) {
	if !strings.HasPrefix(echartsJS, "/*! Apache ECharts 5.6.0") {
		t.Errorf("assets/echarts.min.js does not start with its licence header")
	}
	for _, bad := range []string{"import(", "XMLHttpRequest", "fetch(", "http:", "https:"} {
		if strings.Contains(echartsJS, bad) {
			t.Errorf("the chart library holds %q: it could load something", bad)
		}
	}
	if len(echartsJS) > 600<<10 {
		t.Errorf("the chart library is %d KiB; the README's build is about 480 KiB", len(echartsJS)>>10)
	}
}

// A clean verdict with warnings before the NaN shows them in a section of
// their own, linked from the navigation; one without shows none.
func TestHTMLAhead(t *testing.T) {
	v := readVerdict(t, "verdict_resnet-clean.json")
	if strings.Contains(render(t, v, Options{}), `id="ahead"`) {
		t.Errorf("a verdict without warnings has the section")
	}
	v.Ahead = []verdict.Ahead{{Source: "dump", Op: "Torch.exp.1.forward", Ranks: []int{0, 3}, Tensor: "input_args.0", Stat: "max",
		Limit: 11.09, LimitReason: "exp stores its result in float16", Step: 5, Series: []verdict.Point{{Step: 3, Value: 4.4}, {Step: 4, Value: 5.5}, {Step: 5, Value: 10.7}},
		Growth: 3.15, Linear: true, StepsLeft: 0.12}}
	page := render(t, v, Options{})
	for _, want := range []string{`id="ahead"`, `href="#ahead"`, "<code>Torch.exp.1.forward</code>", "ranks 0,3", "4.4 → 5.5 → 10.7 (steps 3-5)", "within the next step"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
