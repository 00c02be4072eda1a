// Command plugin-release packs the built plugin into its release archive and
// checks an archive offline, with the catalogue validator's checks that need
// no network (pkg/release). scripts/package.sh runs both.
//
//	plugin-release pack  [-dist dist] [-out release]
//	plugin-release check [-source .] [-platforms linux/amd64,...] ARCHIVE.zip
//	plugin-release check-agent [-source .] -version X.Y.Z vllm-node-agent-X.Y.Z-linux-ARCH.tar.gz...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	case "check-agent":
		return checkAgent(args[1:])
	}
	return fmt.Errorf("unknown command %q; allowed: pack, check, check-agent", args[0])
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

// checkAgent checks node agent archives; each one's platform comes from its
// name (release.AgentArchiveName).
func checkAgent(args []string) error {
	fs := flag.NewFlagSet("check-agent", flag.ContinueOnError)
	source := fs.String("source", ".", "the repository the archives were built from (\"\" to check the archives alone)")
	version := fs.String("version", "", "the release version (package.json's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || fs.NArg() == 0 {
		return errors.New("check-agent needs -version and at least one archive")
	}
	failed := 0
	for _, path := range fs.Args() {
		failed += checkAgentArchive(path, *source, *version)
	}
	if failed > 0 {
		return fmt.Errorf("%d node agent archive(s) failed", failed)
	}
	return nil
}

func checkAgentArchive(path, source, version string) int {
	probs := agentProblems(path, source, version)
	if len(probs) == 0 {
		fmt.Printf("ok   %s\n", path)
		return 0
	}
	fmt.Printf("FAIL %s\n", path)
	for _, p := range probs {
		fmt.Printf("       - %s\n", p)
	}
	return 1
}

func agentProblems(path, source, version string) []string {
	for _, pl := range release.AgentPlatforms {
		if filepath.Base(path) != release.AgentArchiveName(version, pl) {
			continue
		}
		a, err := release.ReadTarGz(path)
		if err != nil {
			return []string{err.Error()}
		}
		return release.CheckAgent(a, release.AgentOptions{Version: version, Platform: pl, SourceDir: source})
	}
	return []string{fmt.Sprintf("the name is not %s for a platform of %v", release.AgentArchiveName(version, release.Platform{OS: "linux", Arch: "ARCH"}), release.AgentPlatforms)}
}
