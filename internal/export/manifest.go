package export

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestSchema names the layout of the manifest; fields may be added,
// none removed or changed.
const ManifestSchema = "nanhunt/export/v1"

// Manifest is the content of _nanhunt_export.json.
type Manifest struct {
	Schema       string         `json:"schema"`
	Version      string         `json:"nanhunt_version"`
	Source       string         `json:"source"`
	Format       string         `json:"format"`
	Compression  string         `json:"compression"`
	Layout       string         `json:"layout"`
	Partitioning []string       `json:"partitioning"`
	Columns      []Column       `json:"columns"`
	Counts       ManifestCounts `json:"counts"`
	Files        []ManifestFile `json:"files"`
	Warnings     []Warning      `json:"warnings"`
}

// ManifestCounts are the totals of an export.
type ManifestCounts struct {
	Files        int   `json:"files"`   // files written
	Damaged      int   `json:"damaged"` // dump.json files damaged or unreadable
	Entries      int64 `json:"entries"`
	Rows         int64 `json:"rows"`
	BytesRead    int64 `json:"bytes_read"`
	BytesWritten int64 `json:"bytes_written"`
}

// ManifestFile is one dump.json and the file written from it.
type ManifestFile struct {
	FileResult
	Damage string `json:"damage,omitempty"`
	Error  string `json:"error,omitempty"`
}

// manifest builds the manifest of a summary.
func (s *Summary) manifest() *Manifest {
	format := cmp.Or(s.Format, Parquet)
	m := &Manifest{
		Schema: ManifestSchema, Version: s.Version, Source: s.Source,
		Format: string(format), Compression: format.compression(),
		Layout:       "step=N/rank=R/" + format.partName(),
		Partitioning: []string{"step", "rank"},
		Columns:      Columns,
		Counts: ManifestCounts{Files: s.Written, Damaged: s.Damaged, Entries: s.Entries, Rows: s.Rows,
			BytesRead: s.BytesRead, BytesWritten: s.BytesWritten},
		Files:    make([]ManifestFile, 0, len(s.Files)),
		Warnings: append([]Warning{}, s.Warnings...),
	}
	for _, f := range s.Files {
		mf := ManifestFile{FileResult: f}
		if abs, err := filepath.Abs(f.Source); err == nil {
			mf.Source = abs
		}
		if f.Damage != nil {
			mf.Damage = f.Damage.Error()
		}
		if f.OpenErr != nil {
			mf.Error = f.OpenErr.Error()
		}
		if f.Mode != "" {
			m.Layout = "mode=M/step=N/rank=R/" + format.partName()
			m.Partitioning = []string{"mode", "step", "rank"}
		}
		m.Files = append(m.Files, mf)
	}
	return m
}

// writeManifest writes _nanhunt_export.json into the output folder.
func writeManifest(s *Summary) error {
	b, err := json.MarshalIndent(s.manifest(), "", "  ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	b = append(b, '\n')
	if err := os.WriteFile(filepath.Join(s.Out, ManifestName), b, 0o644); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	return nil
}
