// Package outguard keeps nanhunt from writing over what it reads. Every
// command that writes a file or a folder checks its outputs with a Guard
// first and writes files through WriteFile:
//
//   - an output that is the same file (device and inode, so a hard link or
//     a symbolic link counts) as an input is refused: the dump's dump.json,
//     stack.json and construct.json files, training logs, monitor files,
//     rules files and saved verdicts;
//   - two outputs that name the same file are refused;
//   - an output inside the msprobe dump is refused. The dump is the whole
//     tree the given path belongs to: for a rank folder, a step folder or a
//     dump.json, DumpRoot climbs to the dump_path above it (and above a
//     MindSpore graph/ or pynative/ level), from the path as named and
//     from where its links lead. A path whose place cannot be decided (a
//     link that cannot be followed, a folder that cannot be looked at) is
//     refused too: the check fails closed;
//   - a dump spread over several disks is followed as the readers follow
//     it: the folders its mode, step and rank folders lead to as symbolic
//     links are the dump too, and an existing output that a file of the
//     dump (or of the monitor output) leads to as a symbolic link is
//     refused as that file.
//
// WriteFile writes into a temporary file in the target's folder and renames
// it over the target, so a failed write leaves the old file as it was and
// no temporary file behind; a new file gets mode 0644, a replaced file
// keeps its mode.
//
// It imports only the standard library.
//
// May import: the standard library only.
package outguard
