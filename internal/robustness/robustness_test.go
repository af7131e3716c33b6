package robustness

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite docs/robustness.md from the table and the figures of this run")

// TestAdversarial runs every case of the table through the nanhunt binary.
func TestAdversarial(t *testing.T) {
	figures := map[string]outcome{}
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
			for _, d := range []string{in, out} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var cred *syscall.Credential
			if c.asNobody {
				cred = nobody(t, root)
			}
			args := c.setup(t, in, out)
			before := treeSum(t, in)
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				if c.during != nil {
					c.during(in, stop)
				}
			}()
			o := runBinary(t, out, args, c.maxTime*4+10*time.Second, cred, &c)
			close(stop)
			<-done
			c.check(t, o)
			if c.after != nil {
				c.after(t, out)
			}
			if after := treeSum(t, in); after != before && !c.mutates {
				t.Errorf("an input changed")
			}
			figures[c.name] = o
			t.Logf("exit %d in %v, peak RSS %.1f MiB", o.code, o.wall.Round(time.Millisecond), float64(o.peakRSS)/(1<<20))
		})
	}
	if t.Failed() || len(figures) != len(cases()) {
		return // the page is checked on a full, passing run
	}
	checkDoc(t, figures)
}

// nobody makes root's folders passable for uid 65534 and returns its
// credential; the case is only meaningful when the tests run as root (as
// another user, permissions already apply).
func nobody(t *testing.T, root string) *syscall.Credential {
	t.Helper()
	if os.Getuid() != 0 {
		return nil
	}
	for d := root; d != "/" && d != "."; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, info.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(filepath.Join(root, "out"), 0o777); err != nil {
		t.Fatal(err)
	}
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(bin); d != "/"; d = filepath.Dir(d) {
		if info, err := os.Stat(d); err == nil && info.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, info.Mode().Perm()|0o011)
		}
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}
}

const docPath = "../../docs/robustness.md"

const measuredStart, measuredEnd = "<!-- measured -->", "<!-- end measured -->"

// checkDoc rewrites docs/robustness.md with -update, and otherwise holds
// its table (not the figures, which change from run to run) to the cases.
func checkDoc(t *testing.T, figures map[string]outcome) {
	got := renderDoc(figures)
	if *update {
		if err := os.WriteFile(docPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v (go test ./internal/robustness -update writes it)", err)
	}
	if withoutFigures(got) != withoutFigures(string(want)) {
		t.Errorf("%s is not the table of the cases: run go test ./internal/robustness -update", docPath)
	}
}

func withoutFigures(doc string) string {
	i, j := strings.Index(doc, measuredStart), strings.Index(doc, measuredEnd)
	if i < 0 || j < i {
		return doc
	}
	return doc[:i] + doc[j:]
}

func renderDoc(figures map[string]outcome) string {
	var b strings.Builder
	b.WriteString(`# Robustness: what nanhunt does with hostile input

Every row is a case of the adversarial table in ` + "`internal/robustness`" + `,
run by ` + "`go test ./...`" + `: the test makes the input itself, runs the
nanhunt binary on it as a child process, and asserts the exit status, a
message, a bound on wall time and on the child's peak RSS (from
` + "`getrusage`" + `), and that every input is byte for byte the same
afterwards. ` + "`go test ./internal/robustness -update`" + ` rewrites this page.
At the default sizes every case's time bound is 10 s; the sizes in
parentheses (` + "`NANHUNT_ROBUSTNESS_FULL=1`" + `) take the bounds written
in the case. The peak RSS is ` + "`getrusage`" + `'s for the child, which Linux
starts from the test process's own peak (the child is started sharing its
memory, then replaces it): a bound is an upper bound on nanhunt's.

Exit status: 0 no anomaly and every expected rank-step read whole, 1 anomaly
found, 2 unusable input or bad usage, 3 no anomaly in what could be read but
some expected rank-step could not be read whole.

`)
	// one section per class, in the order the classes first come
	var classes []string
	byClass := map[string][]adversarialCase{}
	for _, c := range cases() {
		if _, ok := byClass[c.class]; !ok {
			classes = append(classes, c.class)
		}
		byClass[c.class] = append(byClass[c.class], c)
	}
	for _, class := range classes {
		fmt.Fprintf(&b, "\n## %s\n\n| case | input | nanhunt | exit | bounds |\n|---|---|---|---|---|\n", heading(class))
		for _, c := range byClass[class] {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %d | %v, %d MiB |\n", c.name, c.input, c.answer, c.exit, c.maxTime, c.maxRSSMiB)
		}
	}
	b.WriteString("\n## Measured\n\n" + measuredStart + "\n")
	b.WriteString("Wall time and peak RSS of each case on the machine that last wrote this page\n(`go test ./internal/robustness -update -v`; the big inputs are the default\nsizes, `NANHUNT_ROBUSTNESS_FULL=1` takes the sizes in parentheses).\n\n| case | wall | peak RSS |\n|---|---|---|\n")
	for _, c := range cases() {
		if o, ok := figures[c.name]; ok {
			fmt.Fprintf(&b, "| `%s` | %v | %.1f MiB |\n", c.name, o.wall.Round(time.Millisecond), float64(o.peakRSS)/(1<<20))
		}
	}
	b.WriteString(measuredEnd + "\n")
	return b.String()
}

func heading(class string) string {
	switch class {
	case "hangs":
		return "Hangs and slow rejection"
	case "memory":
		return "Memory that grows with the input"
	case "writes":
		return "Writes over an input"
	case "cannot tell":
		return "Saying what it cannot tell"
	case "links":
		return "Symbolic links"
	case "command line":
		return "Command line"
	case "untrusted input":
		return "A dump is untrusted input"
	case "false clean":
		return "Never a false clean: \"no NaN or Inf\" about what was not read"
	case "summaries":
		return "Across a cluster: summaries that must not say clean"
	}
	return class
}
