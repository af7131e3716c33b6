package outguard

import "errors"

// The reasons an output is refused. Check's errors wrap one of them and
// read as a sentence: "refusing to write verdict.json: it is the same file
// as the input train.log".
var (
	// ErrSameFile: the output is an input (the same device and inode).
	ErrSameFile = errors.New("it is the same file as the input")
	// ErrSameOutput: two outputs name one file.
	ErrSameOutput = errors.New("name the same file")
	// ErrInsideDump: the output lies inside the msprobe dump.
	ErrInsideDump = errors.New("it is inside the dump")
	// ErrUndecided: where the output or the dump lies could not be told.
	ErrUndecided = errors.New("cannot tell whether it is inside the dump")
)
