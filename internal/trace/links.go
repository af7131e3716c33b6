package trace

import (
	"path/filepath"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/verdict"
)

// nameLinks names in v.Scanned the folders read through a symbolic link:
// the path given, and the mode, step and rank folders of the steps read
// (those of dirs in the verdict's mode).
func nameLinks(v *verdict.Verdict, layout *dump.Layout, dirs []dump.RankDir) {
	if len(layout.Links) == 0 {
		return
	}
	steps := map[int]bool{}
	for _, s := range v.Scanned.Steps {
		steps[s] = true
	}
	if s := v.Scanned.CheckedNext; s != nil {
		steps[*s] = true
	}
	read := map[string]bool{filepath.Clean(layout.Root): true}
	for _, d := range dirs {
		if d.Mode != v.Scanned.Mode || !steps[d.Step] {
			continue
		}
		// the rank folder, its step folder and a mode folder above it
		for p, up := d.Dir, 0; up < 3; p, up = filepath.Dir(p), up+1 {
			read[p] = true
		}
	}
	var links []verdict.Link
	for _, l := range layout.Links {
		if read[l.Path] {
			links = append(links, verdict.Link{Path: l.Path, Target: l.Target})
		}
	}
	v.Scanned.LinksTotal = len(links)
	v.Scanned.Links = links[:min(len(links), verdict.MaxLinks)]
}
