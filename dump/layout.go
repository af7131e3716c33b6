package dump

import "github.com/nanhunt/nanhunt/internal/dumplayout"

// Layout is every rank folder found under a path (Dirs), sorted by mode,
// step and rank, with what is odd about the tree: the step folders that
// hold no rank folder that can be read (EmptySteps), one Note per odd
// folder, the warnings to show (Warnings: the notes' texts, then the steps
// and ranks missing between those dumped), and the folders read through a
// symbolic link (Links). Select and SelectEmpty pick steps and ranks.
type Layout = dumplayout.Layout

// RankDir is one rank's dump of one step, dump_path/stepN/rankM: its mode
// ("", or MindSpore's "graph" or "pynative"), step, rank, folder and the
// paths of its dump.json, stack.json and construct.json ("" when absent).
// NoDump says the folder held no dump.json when it was found.
type RankDir = dumplayout.RankDir

// Discover finds the rank folders under path, which may be a dump_path
// (stepN/ folders), a step folder (rankN/ folders), a rank folder (holding
// dump.json), a dump.json file, or a folder with MindSpore's graph/ and
// pynative/ levels above any of these. It fails when nothing under the
// path looks like an msprobe dump.
func Discover(path string) (*Layout, error) { return dumplayout.Discover(path) }
