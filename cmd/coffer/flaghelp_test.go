package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite docs/flags.md from the flag definitions")

// TestFlagGroups: every flag of serve is in exactly one area of serveGroups, every
// name there is a flag, and no line of --help is wider than helpWidth.
func TestFlagGroups(t *testing.T) {
	fs := newServeCmd().Flags()
	seen := map[string]string{}
	for _, g := range serveGroups {
		for _, name := range g.flags {
			if fs.Lookup(name) == nil {
				t.Errorf("area %s lists --%s, which serve does not have", g.title, name)
			}
			if prev, ok := seen[name]; ok {
				t.Errorf("--%s is in %s and in %s", name, prev, g.title)
			}
			seen[name] = g.title
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := seen[f.Name]; !ok && f.Name != "help" {
			t.Errorf("--%s is in no area of serveGroups (cmd/coffer/flaghelp.go): place it there", f.Name)
		}
	})
	var out bytes.Buffer
	cmd := newServeCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if len(l) > helpWidth {
			t.Errorf("--help line of %d columns: %q", len(l), l)
		}
	}
	if !strings.Contains(out.String(), "\nImages: ") || !strings.Contains(out.String(), "  --image-workers int") {
		t.Errorf("--help is not grouped:\n%s", out.String())
	}
}

// TestFlagsDoc: docs/flags.md is what the flag definitions generate; -update
// rewrites it.
func TestFlagsDoc(t *testing.T) {
	var b bytes.Buffer
	flagsMarkdown(&b, newServeCmd().Flags())
	const path = "../../docs/flags.md"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("docs/flags.md is stale (%v): run go test ./cmd/coffer -run TestFlagsDoc -update", err)
	}
}
