package core

import (
	"encoding/csv"
	"io"
	"strings"
)

// CSVExport writes the rows of a CSV export with every cell neutralised
// (CSVSafe): the exports carry text that users, monitored sites and probe
// agents chose (names, URLs, error messages, regions, error types), and a
// spreadsheet opening the file must show it, not run it.
type CSVExport struct{ w *csv.Writer }

// NewCSVExport writes CSV rows to w.
func NewCSVExport(w io.Writer) *CSVExport { return &CSVExport{w: csv.NewWriter(w)} }

// Row writes one record; the error of a client gone away is dropped.
func (e *CSVExport) Row(cells ...string) {
	for i, c := range cells {
		cells[i] = CSVSafe(c)
	}
	_ = e.w.Write(cells)
}

// Flush writes buffered rows out.
func (e *CSVExport) Flush() { e.w.Flush() }

// CSVSafe defuses a value a spreadsheet would read as a formula (OWASP CSV
// injection): one starting with =, +, -, @, a tab or a carriage return gets
// a leading single quote, which spreadsheets show as text and do not run.
// Leading spaces are looked through, since spreadsheets skip them too.
func CSVSafe(v string) string {
	if t := strings.TrimLeft(v, " "); t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0])) {
		return "'" + v
	}
	return v
}
