package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/spf13/cobra"
)

// rangeItem is one item of a --steps or --ranks list: N or N-M.
var rangeItem = regexp.MustCompile(`^[0-9]+(-[0-9]+)?$`)

// parseRanges reads a --steps or --ranks list ("0,3-7"). It is stricter
// than intranges.Parse, which skips empty items ("1,,2", "4,") and takes
// a sign ("+3"): on a command line those are mistakes.
func parseRanges(flag, s string) (map[int]bool, error) {
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%s %q: an empty item; want N or N-M separated by commas, e.g. 0,3-7", flag, s)
		}
		if !rangeItem.MatchString(item) {
			return nil, fmt.Errorf("%s %q: %q is not N or N-M", flag, s, item)
		}
	}
	set, err := notation.ParseRanges(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return set, nil
}

// selection reads --steps and --ranks ("" means all).
func selection(steps, ranks string) (map[int]bool, map[int]bool, error) {
	var s, r map[int]bool
	var err error
	if steps != "" {
		if s, err = parseRanges("--steps", steps); err != nil {
			return nil, nil, err
		}
	}
	if ranks != "" {
		if r, err = parseRanges("--ranks", ranks); err != nil {
			return nil, nil, err
		}
	}
	return s, r, nil
}

// checkSelection refuses a --steps or --ranks given empty ("--steps="):
// leaving the flag out is the way to say "all".
func checkSelection(cmd *cobra.Command, steps, ranks string) error {
	for _, f := range []struct{ name, value string }{{"steps", steps}, {"ranks", ranks}} {
		if cmd.Flags().Changed(f.name) && strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("--%s: an empty list (leave --%s out for all)", f.name, f.name)
		}
	}
	_, _, err := selection(steps, ranks)
	return err
}

// checkJobs refuses --jobs below 1 when it is given: leaving it out is the
// way to say "one per CPU".
func checkJobs(cmd *cobra.Command, jobs int) error {
	if cmd.Flags().Changed("jobs") && jobs < 1 {
		return fmt.Errorf("--jobs %d: want 1 or more (leave --jobs out for one per CPU)", jobs)
	}
	return nil
}

// checkFormat refuses a --format the command does not write.
func checkFormat(format string, want ...string) error {
	if slices.Contains(want, format) {
		return nil
	}
	return fmt.Errorf("--format %q: want %s or %s", format, strings.Join(want[:len(want)-1], ", "), want[len(want)-1])
}
