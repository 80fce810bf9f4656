package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroup is one area of serve's flags, as --help and docs/flags.md show them.
type flagGroup struct {
	title, about string
	flags        []string
}

// serveGroups places every flag of serve (and migrate, which has a few of them) in
// one area; TestFlagGroups fails for a flag left out, so a new flag must be placed.
var serveGroups = []flagGroup{
	{"Server", "where it listens and what it serves there",
		[]string{"listen", "public-url", "h2c", "fast-path", "console", "shutdown-timeout", "gc-heap-floor"}},
	{"Storage", "the metadata database and the blob store",
		[]string{"data-dir", "database-url", "s3-endpoint", "s3-bucket", "s3-region", "s3-access-key", "s3-secret-key",
			"s3-path-style", "sweep-interval", "stale-upload-after"}},
	{"Auth", "credentials, rules and presigned URLs",
		[]string{"admin-secret", "jwt-secret", "unauthorized-role", "rules", "presign-secret", "presign-previous-secrets"}},
	{"hasura-storage compatibility", "answers that differ from hasura-storage's unless asked",
		[]string{"jwt-admin-role", "hide-forbidden", "etag"}},
	{"Caches", "what a hot download is answered from",
		[]string{"content-cache-size", "content-cache-max-file", "meta-cache-files", "meta-cache-ttl", "variant-cache-size",
			"variants-per-file"}},
	{"Images", "transformations on the fly and their workers",
		[]string{"image-workers", "image-queue", "image-user-workers", "image-user-queue", "image-max-pixels", "image-max-bytes",
			"image-max-cost", "image-timeout", "image-worker", "image-worker-idle", "image-workers-remote", "image-workers-secret",
			"image-workers-tls-ca", "image-workers-tls-cert", "image-workers-tls-key"}},
	{"Webhooks", "deliveries of file events",
		[]string{"webhook-workers", "webhook-timeout", "webhook-max-attempts", "webhook-retention", "webhook-allow-networks"}},
	{"Virus scanning", "uploads scanned by clamd as they stream",
		[]string{"clamav-addr", "clamav-timeout", "clamav-fail-open"}},
	{"Tenants", "many tenants on one fleet, routed by host",
		[]string{"tenants", "platform-secret", "tenant-key", "default-tenant-hosts", "tenant-wildcards", "tenant-path-prefix",
			"trusted-proxies", "tenant-graphs", "tenant-metrics-labels"}},
	{"Sites", "the content origin: sites, their edge cache and audit log",
		[]string{"sites", "sites-refresh", "edge-cache-dir", "edge-cache-size", "edge-max-object", "audit-dir", "audit-size",
			"audit-collector"}},
	{"Observability", "logs, metrics and profiles",
		[]string{"log-level", "log-format", "access-log", "access-log-reads-per-sec", "metrics-listen", "metrics-token",
			"debug-listen"}},
}

// helpWidth is the widest line --help writes.
const helpWidth = 100

// groupedUsage makes cmd's usage list its flags by area (serveGroups), each
// description wrapped within helpWidth columns.
func groupedUsage(cmd *cobra.Command) {
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s [flags]\n", c.CommandPath())
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
		}
		fmt.Fprintf(w, "\nEvery flag may be given as an environment variable instead: COFFER_ and its name in\n"+
			"capitals, '-' as '_' (--admin-secret: COFFER_ADMIN_SECRET). A flag given wins.\n")
		writeGroups(w, c.Flags())
		return nil
	})
}

// writeGroups writes fs's flags by area.
func writeGroups(w io.Writer, fs *pflag.FlagSet) {
	for _, g := range serveGroups {
		var flags []*pflag.Flag
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil {
				flags = append(flags, f)
			}
		}
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", g.title, g.about)
		for _, f := range flags {
			writeFlag(w, f)
		}
	}
	if f := fs.Lookup("help"); f != nil {
		fmt.Fprintf(w, "\n")
		writeFlag(w, f)
	}
}

// flagIndent is where a flag's description starts.
const flagIndent = 34

// writeFlag writes one flag: its name and type, then its description (default
// included) wrapped from column flagIndent, or from the next line when the name is
// wider.
func writeFlag(w io.Writer, f *pflag.Flag) {
	head := "  --" + f.Name
	if t := flagType(f); t != "" {
		head += " " + t
	}
	desc := flagUsage(f)
	if d := flagDefault(f); d != "" {
		desc += " (default " + d + ")"
	}
	lines := wrap(desc, helpWidth-flagIndent)
	pad := strings.Repeat(" ", flagIndent)
	if len(head) >= flagIndent-1 {
		fmt.Fprintln(w, head)
		head = pad
	} else {
		head += strings.Repeat(" ", flagIndent-len(head))
	}
	for i, l := range lines {
		if i > 0 {
			head = pad
		}
		fmt.Fprintln(w, head+l)
	}
}

// flagUsage is f's description without the "(env ...)" bindEnv adds.
func flagUsage(f *pflag.Flag) string {
	return strings.TrimSuffix(f.Usage, " (env "+envName(f.Name)+")")
}

// flagType names the value f takes; "" for a boolean.
func flagType(f *pflag.Flag) string {
	switch t := f.Value.Type(); t {
	case "bool":
		return ""
	case "stringSlice":
		return "list"
	case "int", "int64":
		return "int"
	default:
		return t
	}
}

// flagDefault is f's default as a user types it; "" for none (an empty string or
// list, false, or help's).
func flagDefault(f *pflag.Flag) string {
	switch d := f.DefValue; {
	case d == "" || d == "[]" || d == "false" || f.Name == "help":
		return ""
	case f.Value.Type() == "string":
		return fmt.Sprintf("%q", d)
	default:
		return d
	}
}

// wrap breaks s into lines of at most width columns at spaces (a longer word
// stays whole on its own line).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	return append(lines, line)
}

// flagsMarkdown renders fs's flags by area as docs/flags.md: a table per area
// (flag, environment variable, default, description).
func flagsMarkdown(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, "# Flags of `coffer serve`\n\n"+
		"Generated from the flag definitions (`cmd/coffer`): `go test ./cmd/coffer -run TestFlagsDoc -update`\n"+
		"rewrites it, and the test fails when it is stale. Every flag may be given as its environment\n"+
		"variable instead; a flag given wins. What the settings mean together: [configuration.md](configuration.md).\n")
	for _, g := range serveGroups {
		fmt.Fprintf(w, "\n## %s\n\n%s.\n\n| flag | environment | default | what |\n|---|---|---|---|\n",
			g.title, strings.ToUpper(g.about[:1])+g.about[1:])
		for _, name := range g.flags {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			head := "`--" + f.Name
			if t := flagType(f); t != "" {
				head += " " + t
			}
			def := flagDefault(f)
			if def != "" {
				def = "`" + def + "`"
			}
			fmt.Fprintf(w, "| %s` | `%s` | %s | %s |\n", head, envName(f.Name), def,
				strings.NewReplacer("|", `\|`, "<", "&lt;").Replace(flagUsage(f)))
		}
	}
}
