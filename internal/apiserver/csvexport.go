package apiserver

import (
	"encoding/csv"
	"io"
	"strings"
)

// csvExport writes the rows of a CSV export with every cell neutralised
// (csvSafe): the exports carry text that users, monitored sites and probe
// agents chose (names, URLs, error messages, regions, error types), and a
// spreadsheet opening the file must show it, not run it.
type csvExport struct{ w *csv.Writer }

func newCSVExport(w io.Writer) *csvExport { return &csvExport{w: csv.NewWriter(w)} }

// Row writes one record; the error of a client gone away is dropped.
func (e *csvExport) Row(cells ...string) {
	for i, c := range cells {
		cells[i] = csvSafe(c)
	}
	_ = e.w.Write(cells)
}

// Flush writes buffered rows out.
func (e *csvExport) Flush() { e.w.Flush() }

// csvSafe defuses a value a spreadsheet would read as a formula (OWASP CSV
// injection): one starting with =, +, -, @, a tab or a carriage return gets
// a leading single quote, which spreadsheets show as text and do not run.
// Leading spaces are looked through, since spreadsheets skip them too.
func csvSafe(v string) string {
	if t := strings.TrimLeft(v, " "); t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0])) {
		return "'" + v
	}
	return v
}
