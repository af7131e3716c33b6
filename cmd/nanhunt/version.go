package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/verdict"
)

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the VCS revision it was built from and the verdict schema",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "nanhunt %s (verdict schema %s)\n", version(), verdict.Schema)
		},
	}
}

// release is the version a packaged build was given (the wheel sets it
// with -ldflags "-X main.release=0.1.0"); "" otherwise.
var release string

// version is the release of a packaged build, the module version ("v1.2.0" for go install ...@v1.2.0), and
// the VCS revision and time a local build was made from ("devel 1a2b3c4d5e6f
// 2026-12-01T20:40:00Z, modified").
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if release != "" {
		v = release
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && v == "devel" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev
		if at != "" {
			v += " " + at
		}
		if modified {
			v += ", modified"
		}
	}
	return v + ", " + bi.GoVersion
}
