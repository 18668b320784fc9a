package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	opaversion "github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func palaceVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install …@vX.Y.Z, or a build in a checkout (a pseudo-version).
		return bi.Main.Version
	}
	// A build without module version still names its commit.
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		return "devel-" + shortHash(rev) + dirty
	}
	return "dev"
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print palace's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]any{
				"version":        palaceVersion(),
				"schema_version": host.SchemaVersion,
				"go":             runtime.Version(),
				"opa":            opaversion.Version,
				"platform":       runtime.GOOS + "/" + runtime.GOARCH,
			}
			return g.output(v, func(w io.Writer) {
				fmt.Fprintf(w, "palace %s (schema v%d, OPA %s, %s, %s)\n", v["version"], host.SchemaVersion, opaversion.Version, runtime.Version(), v["platform"])
			})
		},
	}
}

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the palace home, database, schema, anchors and policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := g.hostOptions()
			if err != nil {
				return err
			}
			r := host.Doctor(cmd.Context(), opts)
			return g.verdict(r, func(w io.Writer) {
				p := newPainter(w)
				fmt.Fprintf(w, "palace %s · home %s · mode %s\n", palaceVersion(), r.Home, r.Mode)
				marks := map[string]string{"ok": p.paint("32", "ok  "), "warn": p.paint("33", "warn"), "fail": p.paint("1;31", "FAIL")}
				// One column for the details, however long a check's name.
				width := 0
				for _, c := range r.Checks {
					width = max(width, len(c.Name))
				}
				for _, c := range r.Checks {
					fmt.Fprintf(w, "  %s %-*s  %s\n", marks[c.Status], width, c.Name, c.Detail)
					if c.Fix != "" {
						fmt.Fprintf(w, "       %*s  %s\n", width, "", p.dim("fix: "+c.Fix))
					}
				}
			}, r.OK())
		},
	}
}
