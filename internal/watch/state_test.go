package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// ParseState takes what Save writes and refuses every other shape, saying
// what is wrong.
func TestParseState(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *State // nil: refused
		err      string
	}{
		{"saved", `{"path": "/d", "next_step": 3, "last_clean_step": 2, "alarm_step": null}`, &State{Path: "/d", Next: 3, Prev: intp(2)}, ""},
		{"alarm", `{"path": "/d", "next_step": 4, "last_clean_step": 1, "alarm_step": 2}`, &State{Path: "/d", Next: 4, Prev: intp(1), Alarm: intp(2)}, ""},
		{"optional members left out", `{"next_step": 0, "path": "/d"}`, &State{Path: "/d"}, ""},
		{"escaped name", `{"pa\u0074h": "/d", "next_step": 1}`, &State{Path: "/d", Next: 1}, ""},
		{"white space after", "{\"path\": \"/d\", \"next_step\": 1}\n\t ", &State{Path: "/d", Next: 1}, ""},
		{"largest next step", `{"path": "/d", "next_step": 1000000000}`, &State{Path: "/d", Next: 1000000000}, ""},
		{"empty", ``, nil, "unexpected EOF"},
		{"truncated", `{"path": "/d", "next_step": 1`, nil, "unexpected EOF"},
		{"an array", `[{"path": "/d"}]`, nil, "an array, not a JSON object"},
		{"null", `null`, nil, "null, not a JSON object"},
		{"not JSON", `path=/d`, nil, "invalid character"},
		{"two objects", `{"path": "/d", "next_step": 1}{}`, nil, "data after the object"},
		{"garbage after", `{"path": "/d", "next_step": 1} x`, nil, "data after the object"},
		{"unknown member", `{"path": "/d", "next_step": 1, "extra": 1}`, nil, `unknown member "extra"`},
		{"other case", `{"Path": "/d", "next_step": 1}`, nil, `unknown member "Path"`},
		{"twice", `{"path": "/d", "next_step": 1, "next_step": 5}`, nil, `"next_step" twice`},
		{"no path", `{"next_step": 1}`, nil, `no "path"`},
		{"empty path", `{"path": "", "next_step": 1}`, nil, `no "path"`},
		{"no next step", `{"path": "/d"}`, nil, `no "next_step"`},
		{"path a number", `{"path": 5, "next_step": 1}`, nil, `"path": a number, not a string`},
		{"next step a string", `{"path": "/d", "next_step": "1"}`, nil, `"next_step": a string, not a step number`},
		{"next step null", `{"path": "/d", "next_step": null}`, nil, `"next_step": null, not a step number`},
		{"next step nested", `{"path": "/d", "next_step": [[[[[[1]]]]]]}`, nil, `"next_step": an array, not a step number`},
		{"fraction", `{"path": "/d", "next_step": 1.5}`, nil, `"next_step": 1.5 is not a step number`},
		{"exponent", `{"path": "/d", "next_step": 1e3}`, nil, `"next_step": 1e3 is not a step number`},
		{"negative", `{"path": "/d", "next_step": -1}`, nil, `"next_step": -1 is not a step number`},
		{"beyond int64", `{"path": "/d", "next_step": 99999999999999999999}`, nil, "is not a step number"},
		{"beyond step folders", `{"path": "/d", "next_step": 1000000001}`, nil, `above 1000000000`},
		{"last clean not below next", `{"path": "/d", "next_step": 3, "last_clean_step": 3}`, nil, `"last_clean_step" 3 is not below "next_step" 3`},
		{"alarm a boolean", `{"path": "/d", "next_step": 3, "alarm_step": true}`, nil, `"alarm_step": a boolean`},
		{"NaN", `{"path": "/d", "next_step": NaN}`, nil, "invalid character"},
		{"not UTF-8", "{\"path\": \"/d\xff\", \"next_step\": 1}", nil, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseState([]byte(tc.in))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseState(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseState(%q): %v", tc.in, err)
			}
			if !sameState(got, *tc.want) {
				t.Errorf("ParseState(%q) = %s, want %s", tc.in, showState(got), showState(*tc.want))
			}
		})
	}
}

// sameState compares two states by value.
func sameState(a, b State) bool {
	eq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Path == b.Path && a.Next == b.Next && eq(a.Prev, b.Prev) && eq(a.Alarm, b.Alarm)
}

// showState writes a state for a message.
func showState(st State) string {
	var b strings.Builder
	encodeState(&b, &st)
	return strings.TrimSpace(b.String())
}

// A state file that is not a regular file is refused at once, whether it
// is looked at (CheckStateFile) or read (LoadState): a named pipe without
// a writer never blocks the watch.
func TestStateFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{zero, "a character device, not a regular file"},
		{dir, "a directory, not a regular file"},
	} {
		for name, read := range map[string]func(string) error{
			"CheckStateFile": CheckStateFile,
			"LoadState":      func(p string) error { _, err := LoadState(p, dir); return err },
		} {
			if err := unblocked(t, name+"("+tc.path+")", func() error { return read(tc.path) }); err == nil || !strings.Contains(err.Error(), tc.kind) {
				t.Errorf("%s(%s) = %v, want %q", name, tc.path, err, tc.kind)
			}
		}
	}
	if err := CheckStateFile(filepath.Join(dir, "none.json")); err != nil {
		t.Errorf("an absent state file: %v", err)
	}
	st, err := LoadState(filepath.Join(dir, "none.json"), dir)
	if err != nil || st.Path != dir || st.Next != 0 {
		t.Errorf("an absent state file is a fresh start: %+v, %v", st, err)
	}
}

// unblocked is what f returns, which it must within five seconds (what
// names the call in the failure).
func unblocked(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocks", what)
	}
	return nil
}

// What Save writes, LoadState reads back; a state of another folder or
// that is not a state is refused naming the file.
func TestStateSavedAndLoaded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "watch.json")
	want := State{Path: dir, Next: 7, Prev: intp(6), Alarm: intp(5)}
	if err := want.Save(file); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(file, dir)
	if err != nil || !sameState(*got, want) {
		t.Fatalf("LoadState = %+v, %v; want %s", got, err, showState(want))
	}
	if _, err := LoadState(file, filepath.Join(dir, "other")); err == nil || !strings.Contains(err.Error(), "the state of a watch of "+dir) {
		t.Errorf("a state of another folder: %v", err)
	}
	os.WriteFile(file, []byte(`{"path": 1}`), 0o644)
	if _, err := LoadState(file, dir); err == nil || !strings.HasPrefix(err.Error(), file+": not a watch state: ") {
		t.Errorf("not a state: %v", err)
	}
}

// A state that cannot be saved does not stop the watch: every step is
// still checked and reported, and Run ends with a SaveError naming the
// file.
func TestStateNotSavedIsReportedAtTheEnd(t *testing.T) {
	dir := generate(t, "legit-masks")
	opt := fast
	opt.Path = dir
	opt.StateFile = filepath.Join(t.TempDir(), "gone", "watch.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rec recorder
	res, err := Run(ctx, opt, rec.emit)
	var se *SaveError
	if !errors.As(err, &se) || se.File != opt.StateFile || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Run = %v, want a SaveError naming %s", err, opt.StateFile)
	}
	if !strings.HasPrefix(err.Error(), opt.StateFile+" was not written: ") {
		t.Errorf("message %q", err)
	}
	if !res.Complete || len(kinds(rec.events, EventStep)) == 0 || len(kinds(rec.events, EventStopped)) != 1 {
		t.Errorf("the watch did not check the steps and stop: %+v", rec.events)
	}
}
