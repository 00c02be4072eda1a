// Command plugin-release packs the built plugin into its release archive and
// checks an archive offline, with the catalogue validator's checks that need
// no network (pkg/release). scripts/package.sh runs both.
//
//	plugin-release pack  [-dist dist] [-out release]
//	plugin-release check [-source .] [-platforms linux/amd64,...] ARCHIVE.zip
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "plugin-release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: plugin-release pack|check [flags]")
	}
	switch args[0] {
	case "pack":
		return pack(args[1:])
	case "check":
		return check(args[1:])
	}
	return fmt.Errorf("unknown command %q; allowed: pack, check", args[0])
}

func pack(args []string) error {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "the built plugin (npm run build + mage build targets)")
	out := fs.String("out", "release", "folder for the .zip and .sha256")
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := release.Pack(*dist, *out)
	if err != nil {
		return err
	}
	fmt.Println(res.Zip)
	return nil
}

func check(args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	source := fs.String("source", ".", "the repository the archive was built from (\"\" to check the archive alone)")
	platforms := fs.String("platforms", "", "comma-separated os/arch whose binaries must be present (default: all five)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("check needs one archive")
	}
	pls, err := parsePlatforms(*platforms)
	if err != nil {
		return err
	}
	a, err := release.ReadZip(fs.Arg(0))
	if err != nil {
		return err
	}
	report := release.Run(a, release.Options{SourceDir: *source, Platforms: pls})
	fmt.Print(report.String())
	if n := len(report.Failed()); n > 0 {
		return fmt.Errorf("%s: %d check(s) failed", fs.Arg(0), n)
	}
	return nil
}

func parsePlatforms(s string) ([]release.Platform, error) {
	if s == "" {
		return nil, nil
	}
	var out []release.Platform
	for _, p := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || osName == "" || arch == "" {
			return nil, fmt.Errorf("platform %q is not os/arch", p)
		}
		out = append(out, release.Platform{OS: osName, Arch: arch})
	}
	return out, nil
}
