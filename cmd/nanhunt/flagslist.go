package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagsSchema names the layout of nanhunt flags --json.
const flagsSchema = "nanhunt/flags/v1"

// flagListing is every command's flags, as nanhunt flags --json writes
// them: what the Python package builds its command lines from, and what
// docs/flags.md is made of.
type flagListing struct {
	Schema   string           `json:"schema"`
	Commands []commandListing `json:"commands"`
}

// commandListing is one command and its flags, by name.
type commandListing struct {
	Name    string      `json:"name"`    // "trace"
	Usage   string      `json:"usage"`   // its usage line, after "nanhunt "
	Summary string      `json:"summary"` // its one-line description
	Flags   []flagEntry `json:"flags"`
}

// flagEntry is one flag. Type is one of flagTypes; Default is the text of
// the default the help shows ("" for none: false, 0, nothing); Repeatable says that the flag
// may be given more than once, each value adding to the others.
type flagEntry struct {
	Name       string `json:"name"`
	Shorthand  string `json:"shorthand"`
	Type       string `json:"type"`
	Default    string `json:"default"`
	Repeatable bool   `json:"repeatable"`
	Help       string `json:"help"`
}

// flagTypes are the types a listed flag has: bool is a switch, ranges a
// list of numbers and ranges ("0,3-7"), duration Go's spelling ("500ms",
// "2s", "10m").
var flagTypes = []string{"bool", "int", "float", "string", "ranges", "duration"}

// rangeFlags are the flags that take a list of numbers and ranges, in
// every command that has them (a string to pflag).
var rangeFlags = map[string]bool{"steps": true, "ranks": true, "fault-ranks": true}

// notListed are cobra's own commands: not nanhunt's, no flags of note.
var notListed = map[string]bool{"help": true, "completion": true}

// listFlags lists the flags of every command under root, commands and
// flags by name; -h/--help, which every command takes, and the hidden old
// names of renamed flags are left out.
func listFlags(root *cobra.Command) (flagListing, error) {
	l := flagListing{Schema: flagsSchema, Commands: []commandListing{}}
	for _, c := range root.Commands() {
		if notListed[c.Name()] || c.Hidden {
			continue
		}
		cl := commandListing{Name: c.Name(), Usage: c.Use, Summary: c.Short, Flags: []flagEntry{}}
		var err error
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if err != nil || f.Hidden || f.Name == "help" {
				return
			}
			var e flagEntry
			if e, err = listFlag(f); err != nil {
				err = fmt.Errorf("nanhunt %s: %w", c.Name(), err)
			}
			cl.Flags = append(cl.Flags, e)
		})
		if err != nil {
			return l, err
		}
		l.Commands = append(l.Commands, cl)
	}
	slices.SortFunc(l.Commands, func(a, b commandListing) int { return strings.Compare(a.Name, b.Name) })
	return l, nil
}

// listFlag is the listing of one flag.
func listFlag(f *pflag.Flag) (flagEntry, error) {
	e := flagEntry{Name: f.Name, Shorthand: f.Shorthand, Default: f.DefValue, Help: f.Usage}
	switch t := f.Value.Type(); t {
	case "bool", "duration":
		e.Type = t
	case "int", "int64":
		e.Type = "int"
	case "float64":
		e.Type = "float"
	case "string":
		e.Type = "string"
		if rangeFlags[f.Name] {
			e.Type = "ranges"
		}
	case "stringArray", "stringSlice":
		e.Type, e.Repeatable = "string", true
	default:
		return e, fmt.Errorf("--%s: a flag of type %s, which the listing has no name for", f.Name, t)
	}
	if zeroDefaults[e.Default] {
		e.Default = "" // the help shows none either
	}
	return e, nil
}

// zeroDefaults are the defaults of a flag left out, which the help does
// not show: the flag's own help says what leaving it out means.
var zeroDefaults = map[string]bool{"false": true, "0": true, "0s": true, "[]": true}

// oldFlagName is the old name of a renamed flag, and what became of it.
type oldFlagName struct {
	command, old, now string
	refused           string // the refusal's message; "" for an alias that works
}

// oldFlagNames are the old names the commands under root keep, by
// command and name.
func oldFlagNames(root *cobra.Command) []oldFlagName {
	var names []oldFlagName
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch {
			case f.Annotations[renamedTo] != nil:
				names = append(names, oldFlagName{command: c.Name(), old: f.Name, now: dashed(c, f.Annotations[renamedTo][0])})
			case f.Annotations[refusedAs] != nil:
				refused := f.Annotations[refusedAs]
				names = append(names, oldFlagName{command: c.Name(), old: f.Name, now: dashed(c, refused[0]), refused: refused[1]})
			}
		})
	}
	slices.SortFunc(names, func(a, b oldFlagName) int {
		return strings.Compare(a.command+" "+a.old, b.command+" "+b.old)
	})
	return names
}
