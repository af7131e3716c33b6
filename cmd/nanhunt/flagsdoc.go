package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func flagsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "flags [--json]",
		Short: "List every command's flags: the reference page, or JSON for programs",
		Long: `flags lists the flags of every nanhunt command, from the commands
themselves: the reference page (Markdown, the repository's docs/flags.md),
or with --json one object for programs (schema nanhunt/flags/v1): each
command's name, usage and summary, and each flag's name, shorthand, type
(bool, int, float, string, ranges such as 0,3-7, or duration such as
500ms), default as the help shows it ("" for none), help, and whether it
may be given more than once. -h/--help, which every command takes, and
the old names of renamed flags are not listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := listFlags(cmd.Root())
			if err != nil {
				return err
			}
			if asJSON {
				return writeFlagsJSON(cmd.OutOrStdout(), l)
			}
			return writeFlagsPage(cmd.OutOrStdout(), l, oldFlagNames(cmd.Root()))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the listing as JSON (nanhunt/flags/v1) instead of the Markdown page")
	return cmd
}

// writeFlagsJSON writes the listing as indented JSON, HTML characters as
// they are.
func writeFlagsJSON(w io.Writer, l flagListing) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// writeFlagsPage writes the listing as the Markdown reference page.
func writeFlagsPage(w io.Writer, l flagListing, old []oldFlagName) error {
	var b strings.Builder
	b.WriteString(`# nanhunt's flags

<!-- Written by "nanhunt flags"; go test ./cmd/nanhunt -update rewrites it. Do not edit. -->

A flag's name means one thing in every command that takes it: ` + "`-o`" + ` is where the
output goes (a file or a folder, as the command says), ` + "`--steps`" + ` and ` + "`--ranks`" + ` are lists of
step and rank numbers (` + "`0,3-7`" + `), ` + "`--format`" + ` is the output format, ` + "`--jobs`" + ` how many files
are read at once. Every command also takes ` + "`-h`" + `/` + "`--help`" + `. Types: ranges are numbers and
ranges separated by commas; a duration is Go's spelling (` + "`500ms`, `2s`, `10m`" + `); a
repeatable flag may be given more than once, each value adding to the others.
` + "`nanhunt flags --json`" + ` gives this listing to programs (schema ` + flagsSchema + `).
`)
	for _, c := range l.Commands {
		fmt.Fprintf(&b, "\n## nanhunt %s\n\n%s.\n\n    nanhunt %s\n", c.Name, c.Summary, c.Usage)
		if len(c.Flags) == 0 {
			b.WriteString("\nNo flags.\n")
			continue
		}
		b.WriteString("\n| Flag | Type | Default | Meaning |\n|---|---|---|---|\n")
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", pageFlagName(f), pageType(f), pageDefault(f), cell(f.Help))
		}
	}
	if len(old) > 0 {
		b.WriteString("\n## Old names\n\nFlags renamed so that each name means one thing. An old name that still works is\n" +
			"hidden from the help and notes on stderr that it goes in the next release.\n\n" +
			"| Command | Old flag | Now | Given the old name |\n|---|---|---|---|\n")
		for _, o := range old {
			given := "works, with a note on stderr"
			if o.refused != "" {
				given = "refused: " + cell(o.refused)
			}
			fmt.Fprintf(&b, "| %s | `--%s` | `%s` | %s |\n", o.command, o.old, o.now, given)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pageFlagName(f flagEntry) string {
	if f.Shorthand != "" {
		return "`-" + f.Shorthand + "`, `--" + f.Name + "`"
	}
	return "`--" + f.Name + "`"
}

func pageType(f flagEntry) string {
	if f.Repeatable {
		return f.Type + ", repeatable"
	}
	return f.Type
}

// pageDefault is the default as the help shows it.
func pageDefault(f flagEntry) string {
	if f.Default == "" {
		return ""
	}
	return cell("`" + f.Default + "`")
}

// cell is text made safe for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
