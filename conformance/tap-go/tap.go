// Copyright The berth authors.
// SPDX-License-Identifier: Apache-2.0

// Package tap writes TAP version 13 (Test Anything Protocol) reports.
//
// It provides the import path github.com/mndrix/tap-go for building the
// OCI runtime-tools validation suite from Debian's Go packages, which do not
// ship that package. Only the API the suite calls is implemented: New,
// Header, Ok, Pass, Fail, Skip, Todo, Diagnostic, Diagnosticf, YAML,
// AutoPlan and Count.
package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// T is one TAP stream. The zero value is not usable; call New.
type T struct {
	// Writer receives the report; New sets it to os.Stdout.
	Writer io.Writer
	// TODO marks every test point written through this T as "# TODO".
	TODO bool

	// count is shared by the Ts derived with Todo so that numbering stays
	// contiguous across them.
	count *int
}

// New returns a T that writes to standard output.
func New() *T {
	return &T{Writer: os.Stdout, count: new(int)}
}

func (t *T) printf(format string, a ...interface{}) {
	fmt.Fprintf(t.Writer, format, a...)
}

// Header writes the version line and, when testCount is positive, the plan.
// A testCount of 0 means the plan comes at the end (see AutoPlan).
func (t *T) Header(testCount int) {
	t.printf("TAP version 13\n")
	if testCount > 0 {
		t.printf("1..%d\n", testCount)
	}
}

// Count is the number of test points written so far.
func (t *T) Count() int {
	return *t.count
}

// AutoPlan writes the plan for the test points written so far.
func (t *T) AutoPlan() {
	t.printf("1..%d\n", t.Count())
}

// Ok writes one test point that passed when test is true.
func (t *T) Ok(test bool, description string) {
	*t.count++
	status := "ok"
	if !test {
		status = "not ok"
	}
	line := fmt.Sprintf("%s %d", status, *t.count)
	if d := oneLine(description); d != "" {
		line += " - " + d
	}
	if t.TODO {
		line += " # TODO"
	}
	t.printf("%s\n", line)
}

// Pass writes a passing test point.
func (t *T) Pass(description string) {
	t.Ok(true, description)
}

// Fail writes a failing test point.
func (t *T) Fail(description string) {
	t.Ok(false, description)
}

// Skip writes count skipped test points, each with the same reason.
func (t *T) Skip(count int, description string) {
	reason := oneLine(description)
	for i := 0; i < count; i++ {
		*t.count++
		t.printf("ok %d # SKIP %s\n", *t.count, reason)
	}
}

// Todo returns a T sharing this one's output and numbering whose test points
// are marked "# TODO" (failures that a harness does not count).
func (t *T) Todo() *T {
	todo := *t
	todo.TODO = true
	return &todo
}

// Diagnostic writes message as comment lines.
func (t *T) Diagnostic(message string) {
	for _, line := range strings.Split(strings.TrimRight(message, "\n"), "\n") {
		t.printf("# %s\n", line)
	}
}

// Diagnosticf formats and writes a diagnostic.
func (t *T) Diagnosticf(format string, a ...interface{}) {
	t.Diagnostic(fmt.Sprintf(format, a...))
}

// YAML writes message as an indented YAML block after the last test point.
// The block is written in JSON flow style, which every YAML 1.2 reader
// accepts and which needs no YAML library; multi-line strings stay on one
// line, so nothing inside the block can look like a TAP line.
func (t *T) YAML(message interface{}) error {
	body, err := json.MarshalIndent(message, "  ", "  ")
	if err != nil {
		return err
	}
	t.printf("  ---\n  %s\n  ...\n", body)
	return nil
}

// oneLine keeps a description on its TAP line: a newline would end the line
// and a harness would read the rest as something else.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "#", "\\#")), " ")
}
