package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError is the flag error function of every command: an unknown
// --flag gets the command's flags it may be a typo of.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedShortnames() != "" {
		return err
	}
	if s := similarFlags(cmd, ne.GetSpecifiedName()); len(s) > 0 {
		return fmt.Errorf("%w (did you mean %s?)", err, strings.Join(s, " or "))
	}
	return err
}

// maxSuggestions bounds the flags one typo is offered.
const maxSuggestions = 3

// similarFlags lists the flags of cmd that start with name, then those
// name is at most two edits away from (and fewer edits than its length),
// closest first.
func similarFlags(cmd *cobra.Command, name string) []string {
	type cand struct {
		name string
		dist int
	}
	var cs []cand
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		switch d := levenshtein(name, f.Name); {
		case len(name) >= 2 && strings.HasPrefix(f.Name, name):
			cs = append(cs, cand{f.Name, 0})
		case d <= 2 && d < len(name):
			cs = append(cs, cand{f.Name, d})
		}
	})
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i, c := range cs {
		if i == maxSuggestions {
			break
		}
		out = append(out, "--"+c.name)
	}
	return out
}

// levenshtein is the number of single-byte insertions, deletions and
// substitutions that turn a into b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
