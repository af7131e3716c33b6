// Package linktest spreads a dump over several disks for tests: Move moves
// a folder or file elsewhere and leaves a symbolic link to it in its
// place, as dump_path/step3 -> /disk2/step3 does.
//
// It imports no nanhunt package.
//
// May import: the standard library only.
package linktest
