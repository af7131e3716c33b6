// Package fixturedir finds the real msprobe fixtures the tests read: the
// folder shared/fixtures next to the repository (../shared/fixtures from
// the module root), where CI has it too. A test that needs them and finds
// them absent says where it looked and fails.
//
// It imports only the standard library.
//
// May import: the standard library only.
package fixturedir
