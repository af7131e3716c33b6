// Package sidefile reads the two files msprobe writes beside dump.json:
// stack.json (each call's Python stack, in msprobe's two formats and the
// [function, file, line] form the nan-overflow-detection skill documents)
// and construct.json (each call's parent module call). Both are streamed:
// memory follows what is kept, not the file.
//
// Package dump re-exports Frame, StackFile, Construct, ReadStackFile and
// ReadConstruct; the readers that keep only some calls (ReadStacksWhere,
// ReadParentsWhere, ReadAncestors) serve the analysis and stay here.
//
// It imports internal/jsonlex and internal/dumpname only.
//
// May import: internal/jsonlex, internal/notation.
package sidefile
