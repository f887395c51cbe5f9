/** `package_install` derivation (spec §3.4), case by case, on top of `@ahp/shell`. */
import { describe, expect, it } from "vitest";
import { binaryName, findInstalls, MAX_SHELL_NESTING, parseInstalls, segmentBinary } from "@ahp/aarts";

type A = [type: string, value: string, context: string];
const arts = (command: string): A[] => parseInstalls(command).artifacts.map((a) => [a.type, a.value, a.context ?? ""]);

// The tokenizer and the wrapper table are @ahp/shell's, tested there (packages/shell/test).
describe("segment normalisation", () => {
  it("binary names: last path component, Windows suffixes stripped case-insensitively", () => {
    expect(binaryName("/usr/local/bin/npm")).toBe("npm");
    expect(binaryName("C:\\tools\\pip.EXE")).toBe("pip");
    expect(binaryName("yarn.cmd")).toBe("yarn");
    expect(binaryName("Install.ps1")).toBe("Install");
    expect(binaryName("NPM")).toBe("NPM");
    expect(segmentBinary(["sudo", "-u", "x", "/usr/bin/python3", "-m", "json.tool"])).toBe("python3");
  });
});

describe("install forms (spec §3.4 table)", () => {
  it.each<[string, A[]]>([
    [
      "npm i -D typescript@5 @types/node",
      [
        ["package", "typescript@5", "npm"],
        ["package", "@types/node", "npm"],
      ],
    ],
    ["npm isntall lodash", [["package", "lodash", "npm"]]],
    ["npm --registry https://r.example install x", [["package", "x", "npm"]]],
    ["npm install --prefix ./tools x", [["package", "x", "npm"]]],
    ["npm exec -- cowsay hi", [["package", "cowsay", "npm:exec"]]],
    ["pnpx degit user/repo dir", [["package", "degit", "npm:exec"]]],
    ["pnpm -F web add react@18", [["package", "react@18", "npm"]]],
    ["pnpm dlx create-vite app", [["package", "create-vite", "npm:exec"]]],
    ["yarn dlx @scope/tool --x", [["package", "@scope/tool", "npm:exec"]]],
    ["bun a hono", [["package", "hono", "npm"]]],
    ["bun x prettier .", [["package", "prettier", "npm:exec"]]],
    ["bunx vitest", [["package", "vitest", "npm:exec"]]],
    ["pip3.11 install --index-url https://x/simple flask", [["package", "flask", "pypi"]]],
    [
      "python -m pip install -e . -c constraints.txt",
      [
        ["file_path", ".", "local_package"],
        ["file_path", "constraints.txt", "requirements_file"],
      ],
    ],
    ["py -3 -m pip install --requirement=req.txt", [["file_path", "req.txt", "requirements_file"]]],
    ["python3 -m uv pip install httpx", [["package", "httpx", "pypi"]]],
    ["uv add 'fastapi[all]>=0.100'", [["package", "fastapi[all]>=0.100", "pypi"]]],
    ["uv tool install ruff", [["package", "ruff", "pypi"]]],
    ["uv tool run black --check .", [["package", "black", "pypi:exec"]]],
    ["uvx --with requests ruff check", [["package", "ruff", "pypi:exec"]]],
    ["pipx run cowsay moo", [["package", "cowsay", "pypi:exec"]]],
    [
      "pipx inject env extra",
      [
        ["package", "env", "pypi"],
        ["package", "extra", "pypi"],
      ],
    ],
    ["poetry add requests", [["package", "requests", "pypi"]]],
    ["pdm add httpx", [["package", "httpx", "pypi"]]],
    ["conda install -c conda-forge numpy", [["package", "numpy", "conda"]]],
    ["cargo install --git https://github.com/x/y --branch main ripgrep", [["package", "ripgrep", "cargo"]]],
    ["cargo binstall cargo-watch", [["package", "cargo-watch", "cargo"]]],
    ["go get github.com/pkg/errors@v0.9.1", [["package", "github.com/pkg/errors@v0.9.1", "golang"]]],
    ["gem install rails -v 7.1", [["package", "rails", "gem"]]],
    ["bundle add sidekiq --group production", [["package", "sidekiq", "gem"]]],
    ["apt-get -o Dpkg::Options::=--force-confnew install -y nginx", [["package", "nginx", "deb"]]],
    ["dnf --enablerepo epel install htop", [["package", "htop", "rpm"]]],
    ["zypper in vim", [["package", "vim", "rpm"]]],
    ["apk add --no-cache curl", [["package", "curl", "apk"]]],
    ["pacman -S --noconfirm git", [["package", "git", "alpm"]]],
    ["brew reinstall --cask firefox", [["package", "firefox", "brew"]]],
    ["port install wget", [["package", "wget", "macports"]]],
    ["snap install code --classic", [["package", "code", "snap"]]],
    [
      "flatpak install flathub org.gimp.GIMP",
      [
        ["package", "flathub", "flatpak"],
        ["package", "org.gimp.GIMP", "flatpak"],
      ],
    ],
    ["choco install git", [["package", "git", "chocolatey"]]],
    ["winget install --id Git.Git", [["package", "Git.Git", "winget"]]],
    ["scoop install jq", [["package", "jq", "scoop"]]],
    ["nix-env -iA nixpkgs.hello", [["package", "nixpkgs.hello", "nix"]]],
    ["nix profile install nixpkgs#ripgrep", [["package", "nixpkgs#ripgrep", "nix"]]],
    ["nix run nixpkgs#cowsay -- hi", [["package", "nixpkgs#cowsay", "nix:exec"]]],
    ["composer require monolog/monolog", [["package", "monolog/monolog", "composer"]]],
    ["dotnet add package Serilog", [["package", "Serilog", "nuget"]]],
    ["dotnet add App.csproj package Polly", [["package", "Polly", "nuget"]]],
    ["nuget install NUnit", [["package", "NUnit", "nuget"]]],
    ["deno add jsr:@std/path", [["package", "jsr:@std/path", "deno"]]],
    ["cabal install pandoc", [["package", "pandoc", "hackage"]]],
    ["opam install dune", [["package", "dune", "opam"]]],
    ["luarocks install luasocket", [["package", "luasocket", "luarocks"]]],
    ["cpanm Moose", [["package", "Moose", "cpan"]]],
    [
      "npm i https://x.test/p.tgz ../lib file:../other ~/pkg /abs/p",
      [
        ["url", "https://x.test/p.tgz", "npm"],
        ["file_path", "../lib", "local_package"],
        ["file_path", "file:../other", "local_package"],
        ["file_path", "~/pkg", "local_package"],
        ["file_path", "/abs/p", "local_package"],
      ],
    ],
    ["npm i a && npm i a && yarn add a", [["package", "a", "npm"]]],
  ])("%s", (command, expected) => {
    expect(parseInstalls(command).isInstall).toBe(true);
    expect(arts(command)).toEqual(expected);
  });

  it.each([
    "npm run build",
    "npm test",
    "npm view react",
    "npm ls",
    "pip list",
    "pip show flask",
    "pip freeze",
    "pip download x",
    "go build ./...",
    "go mod download",
    "go run ./cmd/server",
    "cargo build --release",
    "cargo run",
    "apt-get update",
    "brew update",
    "brew upgrade node",
    "echo npm install x",
    "git commit -m 'npm install x'",
    "python script.py",
    "bash script.sh",
    "",
  ])("not an install: %j", (command) => {
    expect(parseInstalls(command)).toEqual({ isInstall: false, artifacts: [] });
  });

  it("zero-target installs are installs", () => {
    for (const c of [
      "npm ci",
      "pip install -r requirements.txt",
      "bundle install",
      "pnpm install --help",
      "yarn install --frozen-lockfile",
    ]) {
      expect(parseInstalls(c).isInstall, c).toBe(true);
    }
  });

  it("shell re-entry: sh/bash -c, -lc, cmd /c, powershell -Command", () => {
    expect(arts("sh -lc 'pip install x'")).toEqual([["package", "x", "pypi"]]);
    expect(arts('bash -e -c "npm i y"')).toEqual([["package", "y", "npm"]]);
    expect(arts("cmd /c npm install z")).toEqual([["package", "z", "npm"]]);
    expect(arts("pwsh -Command choco install git")).toEqual([["package", "git", "chocolatey"]]);
    expect(arts("powershell.exe -c 'winget install x'")).toEqual([["package", "x", "winget"]]);
  });

  it(`nesting is parsed to depth ${MAX_SHELL_NESTING} and no deeper`, () => {
    expect(parseInstalls(`bash -c "bash -c 'npm i two'"`).isInstall).toBe(true);
    expect(parseInstalls(`echo $(echo $(npm i two))`).isInstall).toBe(true);
    expect(parseInstalls(`bash -c "bash -c 'bash -c \\"npm i three\\"'"`).isInstall).toBe(false);
    expect(findInstalls("echo $(bash -c 'npm i x')")).toHaveLength(1);
  });

  it("source_field is configurable", () => {
    expect(parseInstalls("npm i x", { sourceField: "tool_input.command_line" }).artifacts[0]!.source_field).toBe("tool_input.command_line");
  });
});
