package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// The closing section names the folders read through links: one as a
// sentence, a few in a list, many by their count and the first few.
func TestScannedLinks(t *testing.T) {
	links := func(n int) []verdict.Link {
		var out []verdict.Link
		for i := range n {
			out = append(out, verdict.Link{Path: fmt.Sprintf("dump/step%d", i), Target: fmt.Sprintf("/disk2/step%d", i)})
		}
		return out
	}
	tests := []struct {
		name     string
		links    []verdict.Link
		total    int
		want     string // the line after "Read ..."; "" when none
		notShown string // a link the line leaves out
	}{
		{"none", nil, 0, "", ""},
		{"one", links(1), 1, "dump/step0 is a link to /disk2/step0.", ""},
		{"two", links(2), 2, "Folders that are links: dump/step0 -> /disk2/step0, dump/step1 -> /disk2/step1.", ""},
		{"many", links(verdict.MaxLinks), 250, "250 folders are links (--format json lists them), among them dump/step0 -> /disk2/step0, dump/step1 -> /disk2/step1, dump/step2 -> /disk2/step2.", "dump/step3 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &verdict.Verdict{Schema: verdict.Schema, Scanned: verdict.Scanned{Steps: []int{0}, Ranks: []int{0}, Files: 1, Links: tt.links, LinksTotal: tt.total}}
			var b bytes.Buffer
			if err := Text(&b, v); err != nil {
				t.Fatal(err)
			}
			text := strings.TrimRight(b.String(), "\n")
			last := text[strings.LastIndex(text, "\n")+1:]
			switch {
			case tt.want == "" && !strings.HasPrefix(last, "Read "):
				t.Errorf("the report ends with %q, not the files read", last)
			case tt.want != "" && last != tt.want:
				t.Errorf("the report ends with\n%q\nwant\n%q", last, tt.want)
			}
			if tt.notShown != "" && strings.Contains(text, tt.notShown) {
				t.Errorf("the report names %q", tt.notShown)
			}
			if line := ScannedLine(v); strings.Contains(line, "\n") || !strings.HasSuffix(line, tt.want) {
				t.Errorf("ScannedLine %q does not end with %q on one line", line, tt.want)
			}
		})
	}
}
