// Reads Parquet files with hyparquet and prints each as JSON lines on
// stdout, for the Go tests to compare with what was written:
//
//   {"path": P, "num_rows": N, "read_rows": R, "row_groups": G, "metadata": {...}, "schema": [...], "codecs": [...]}
//   [cell, cell, ...]                      R lines, one per row read, columns in file order
//
// A cell is null, true/false, a JSON string (a string column), a bare JSON
// number (every integer exactly, and every finite double but -0 in its
// shortest form), "NaN", "Infinity", "-Infinity" or "-0" (a double JSON
// cannot spell), or an array of cells (a list column). Anything else the
// reader returns is an error: the tests must see what hyparquet decoded.
//
// Gzip pages are inflated with node's zlib, not with code of the writer's.
// Strings are decoded by a parser given here, strictly and keeping a
// leading U+FEFF: hyparquet's default drops a leading byte order mark
// (TextDecoder's default) and replaces invalid UTF-8, both of which would
// hide what the file holds.
import { gunzipSync } from 'node:zlib'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function cell(v) {
  if (v === null || v === undefined) return 'null'
  switch (typeof v) {
    case 'boolean': return String(v)
    case 'bigint': return v.toString()
    case 'string': return JSON.stringify(v)
    case 'number':
      if (Number.isNaN(v)) return '"NaN"'
      if (v === Infinity) return '"Infinity"'
      if (v === -Infinity) return '"-Infinity"'
      if (Object.is(v, -0)) return '"-0"'
      return String(v)
  }
  if (Array.isArray(v)) return '[' + v.map(cell).join(',') + ']'
  throw new Error(`unexpected value ${Object.prototype.toString.call(v)}: ${String(v)}`)
}

// read appends the lines of one file to out: its header, then its rows.
async function read(path, out) {
  const file = await asyncBufferFromFile(path)
  const meta = await parquetMetadataAsync(file)
  const kv = {}
  for (const { key, value } of meta.key_value_metadata ?? []) kv[key] = value
  const codecs = new Set()
  for (const g of meta.row_groups) for (const c of g.columns) codecs.add(c.meta_data.codec)
  const rows = await parquetReadObjects({
    file,
    metadata: meta,
    compressors: { GZIP: input => gunzipSync(input) },
    parsers: { stringFromBytes: bytes => bytes && utf8.decode(bytes) },
  })
  // the top-level columns: the root's children, skipping nested elements
  const names = []
  let i = 1
  const skip = () => { const e = meta.schema[i++]; for (let k = 0; k < (e.num_children ?? 0); k++) skip() }
  while (i < meta.schema.length) { names.push(meta.schema[i].name); skip() }
  out.push(JSON.stringify({
    path,
    num_rows: Number(meta.num_rows),
    read_rows: rows.length,
    row_groups: meta.row_groups.length,
    metadata: kv,
    schema: meta.schema.map(e => ({
      name: e.name,
      type: e.type ?? '',
      repetition: e.repetition_type ?? '',
      converted: e.converted_type ?? '',
      logical: e.logical_type?.type ?? '',
      children: e.num_children ?? 0,
    })),
    codecs: [...codecs].sort(),
  }))
  for (const r of rows) out.push('[' + names.map(n => cell(r[n])).join(',') + ']')
}

const paths = process.argv.slice(2)
if (paths.length === 0) {
  process.stderr.write('usage: node read.mjs FILE.parquet...\n')
  process.exit(2)
}
for (const path of paths) {
  const out = []
  await read(path, out)
  process.stdout.write(out.join('\n') + '\n')
}
