package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The dump, the training log and the monitor output are read under the
// command's context: once it is cancelled (Ctrl-C), each of them stops and
// the command exits 2 saying it was interrupted.
func TestInterrupted(t *testing.T) {
	r := newGuardRun(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		args []string
	}{
		{"the dump", []string{"trace", r.dump}},
		{"the log", []string{"trace", "--log", r.log}},
		{"the monitor", []string{"trace", "--monitor", r.monitor}},
		{"all three", []string{"trace", r.dump, "--log", r.log, "--monitor", r.monitor}},
		{"all three, as JSON", []string{"trace", r.dump, "--log", r.log, "--monitor", r.monitor, "--format", "json"}},
		{"a plan from a saved verdict and a log", []string{"plan", "--verdict", r.verdict, "--log", r.log}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runContext(context.Background(), tt.args, &out, &errb); code == exitError {
				t.Fatalf("not cancelled: exit %d, %s", code, errb.String())
			}
			out.Reset()
			errb.Reset()
			code := runContext(cancelled, tt.args, &out, &errb)
			if code != exitError || errb.String() != "nanhunt: interrupted\n" {
				t.Errorf("cancelled: exit %d, stderr %q", code, errb.String())
			}
			json := strings.Contains(strings.Join(tt.args, " "), "--format json")
			if json != strings.Contains(out.String(), `"message": "interrupted"`) || (!json && out.Len() > 0) {
				t.Errorf("stdout %q", out.String())
			}
		})
	}
}
