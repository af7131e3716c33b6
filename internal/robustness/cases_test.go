package robustness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// adversarialCase is one hostile input and what nanhunt must do with it.
type adversarialCase struct {
	class  string // the kind of defect the case closes
	name   string
	input  string // what the case makes, for people
	answer string // what nanhunt does, for people

	// setup makes the inputs under in and returns the arguments; the
	// child runs in out, the one folder it may write to.
	setup func(t *testing.T, in, out string) []string

	exit      int
	message   string // a regular expression some output must match
	maxTime   time.Duration
	maxRSSMiB int
	stdout    func(t *testing.T, stdout string) // more checks, when set
	asNobody  bool                              // run as uid 65534, so that permissions apply
	// during, when set, runs beside the child until it ends; a case
	// that changes its input on purpose sets mutates.
	during  func(in string, stop <-chan struct{})
	mutates bool
	// fileLimitKiB, when set, caps the size of every file the child
	// writes: a disk that fills up under it
	fileLimitKiB int
	// signal, when set, is sent to the child once signalWhen holds on the
	// folder it runs in
	signal     syscall.Signal
	signalWhen func(out string) bool
	// after, when set, checks what the child left in its folder
	after func(t *testing.T, out string)
	// env is more of the child's environment (a launcher's variables)
	env []string
}

const (
	exitClean      = 0
	exitAnomaly    = 1
	exitError      = 2
	exitIncomplete = 3
)

// Sizes of the big inputs; NANHUNT_ROBUSTNESS_FULL=1 takes the sizes a
// tester reported (5 million tensors, a 561 MB stack.json).
func size(normal, full int) int {
	if os.Getenv("NANHUNT_ROBUSTNESS_FULL") != "" {
		return full
	}
	return normal
}

// bound is a case's time bound: 10 s at the default sizes, which every
// case keeps to, and full at the sizes NANHUNT_ROBUSTNESS_FULL=1 takes.
func bound(full time.Duration) time.Duration {
	if os.Getenv("NANHUNT_ROBUSTNESS_FULL") != "" {
		return full
	}
	return 10 * time.Second
}

func rank(in string, r int) string { return filepath.Join(in, "step0", "rank"+string(rune('0'+r))) }

func cases() []adversarialCase {
	return slices.Concat(falseCleanCases(), watchCleanCases(), baseCases(), nameCases(), commandUntrustedCases(), watchUntrustedCases(), outputCases(), reproUntrustedCases(), summaryCleanCases(),
		summaryUntrustedCases())
}

// baseCases are the hangs, memory, writes, links, command-line and
// cannot-tell cases, in that order.
func baseCases() []adversarialCase {
	return slices.Concat(pipeCases(), slowParseCases(), memoryCases(), writeCases(), linkCases(), commandLineCases(), cannotTellCases())
}

// firstLine checks the first line of the report.
func firstLine(want string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		if got, _, _ := strings.Cut(stdout, "\n"); got != want {
			t.Errorf("first line %q, want %q", got, want)
		}
	}
}

// holeyVerdict is a saved verdict with an anomaly whose origin names no rank.
func holeyVerdict(t *testing.T) string {
	v := map[string]any{
		"schema": "nanhunt/verdict/v1", "anomaly": true,
		"origin": map[string]any{"step": 0, "ranks": []int{}, "op": "Torch.sqrt.0.forward", "stage": "forward", "kind": "nan"},
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
