package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A flag's old name, after it was renamed, is a hidden flag: not in the
// help, the flags listing or the typo suggestions. Its annotations say
// what became of it:
//
//   - renamedTo: an alias that still works for one release, as the flag it
//     was renamed to (they share one value), with a one-line note on stderr;
//   - refusedAs: an old name whose old meaning a user could confuse with
//     another command's flag of that name: it is an error that names the
//     new flag, never taken silently.
const (
	renamedTo = "nanhunt-renamed-to"
	refusedAs = "nanhunt-refused-as"
)

// addAlias registers old as a hidden alias of the command's flag now,
// which must be registered already.
func addAlias(cmd *cobra.Command, old, now string) {
	f := cmd.Flags().Lookup(now)
	if f == nil {
		panic("addAlias: no flag --" + now)
	}
	cmd.Flags().AddFlag(&pflag.Flag{Name: old, Value: f.Value, DefValue: f.DefValue, Usage: "old name of --" + now,
		Hidden: true, Annotations: map[string][]string{renamedTo: {now}}})
}

// addRefused registers old, renamed now, as a hidden flag that is
// refused with msg. It takes any text, so that every value of the old name
// gets msg rather than a parse error.
func addRefused(cmd *cobra.Command, old, now, msg string) {
	var ignored string
	cmd.Flags().StringVar(&ignored, old, "", "old name, refused: "+msg)
	f := cmd.Flags().Lookup(old)
	f.Hidden = true
	f.Annotations = map[string][]string{refusedAs: {now, msg}}
}

// dashed is a flag's name as it is typed: -o for a flag with a
// shorthand, --NAME otherwise.
func dashed(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil && f.Shorthand != "" {
		return "-" + f.Shorthand
	}
	return "--" + name
}

// checkOldNames runs before every command: an old name given is refused,
// or noted on stderr and counted as its new flag given (Changed), so that
// the command sees no difference. The old and the new name given together
// are refused: the one value they share cannot hold both.
func checkOldNames(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().VisitAll(func(old *pflag.Flag) {
		if err != nil || !old.Changed {
			return
		}
		if refused := old.Annotations[refusedAs]; refused != nil {
			err = fmt.Errorf("%s --%s: %s", cmd.Name(), old.Name, refused[1])
			return
		}
		to := old.Annotations[renamedTo]
		if to == nil {
			return
		}
		now := cmd.Flags().Lookup(to[0])
		if now.Changed {
			err = fmt.Errorf("--%s is the old name of %s: give %s only", old.Name, dashed(cmd, now.Name), dashed(cmd, now.Name))
			return
		}
		now.Changed = true
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: %s --%s is deprecated and goes in the next release: use %s\n", cmd.Name(), old.Name, dashed(cmd, now.Name))
	})
	return err
}
