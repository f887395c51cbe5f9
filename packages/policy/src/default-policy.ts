/**
 * The default policy, generated from policies/default.yaml by scripts/gen-default-policy.ts
 * (do not edit by hand; edit the YAML file and run `pnpm --filter @ahp/policy generate`).
 * See the README for what each rule does.
 */
import type { PolicyFileInput } from "./schema.js";

/**
 * The built-in default policy (`ahp serve` without `--policy`, `pnpm demo`, the AARTS hook):
 * blocks destructive commands, writes outside the workspace and credential exfiltration, escalates
 * what it cannot analyse and unnamed actions, redacts secrets; allows the rest.
 */
export const DEFAULT_POLICY: PolicyFileInput = {
  "version": 1,
  "name": "ahp-default",
  "description": "Blocks destructive commands, writes outside the workspace and credential exfiltration; escalates installs from unknown sources and pushes to protected branches; redacts secrets in prompts and tool results; allows the rest.",
  "default": {
    "decision": "allow"
  },
  "rules": [
    {
      "id": "block-recursive-delete-root",
      "description": "Recursive delete of /, a top-level directory, the home directory or a system directory (rm -rf /, rm -fr ~, rm -r -f /*, sudo rm -rf \"$HOME\").",
      "events": "pre_action",
      "match": {
        "shell": {
          "program": "rm",
          "flags_any": [
            "r",
            "R",
            "recursive"
          ],
          "paths": [
            {
              "glob": [
                "/",
                "/*",
                "~",
                "~/\\*",
                "~/.\\*",
                "~/.ssh",
                "~/.gnupg",
                "~/.aws",
                "/{bin,boot,dev,etc,home,lib,lib32,lib64,opt,proc,root,sbin,srv,sys,usr,var,System,Library,Applications,Users}/*"
              ]
            }
          ]
        }
      },
      "action": {
        "decision": "block",
        "reason": "Recursive delete of the root, home or a system directory"
      }
    },
    {
      "id": "block-find-delete-root",
      "description": "find over / or the home directory with -delete or -exec rm.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "program": "find",
              "flags_any": [
                "delete"
              ],
              "args": [
                {
                  "one_of": [
                    "/",
                    "~",
                    "/home",
                    "/Users"
                  ]
                }
              ]
            }
          },
          {
            "shell": {
              "program": "find",
              "args": [
                {
                  "one_of": [
                    "/",
                    "~",
                    "/home",
                    "/Users"
                  ]
                },
                {
                  "equals": "rm"
                }
              ]
            }
          }
        ]
      },
      "action": {
        "decision": "block",
        "reason": "Recursive delete of the root or home directory"
      }
    },
    {
      "id": "block-raw-disk-write",
      "description": "Writing to a raw disk device (dd of=/dev/sda, > /dev/sda, shred/wipefs on a device).",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "program": "dd",
              "args": [
                {
                  "regex": "^of=/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|mapper/|loop)"
                }
              ]
            }
          },
          {
            "shell": {
              "redirect": {
                "regex": "^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|mapper/)"
              }
            }
          },
          {
            "shell": {
              "program": [
                "shred",
                "wipefs",
                "blkdiscard"
              ],
              "args": [
                {
                  "regex": "^/dev/"
                }
              ]
            }
          }
        ]
      },
      "action": {
        "decision": "block",
        "reason": "Raw write to a disk device"
      }
    },
    {
      "id": "block-recursive-permission-change-system",
      "description": "Recursive mode, owner or group change of /, a system directory or the home directory (chmod -R 000 /, chown -R nobody /etc, cd / && chmod -R 777 *).",
      "events": "pre_action",
      "match": {
        "shell": {
          "program": [
            "chmod",
            "chown",
            "chgrp",
            "setfacl"
          ],
          "flags_any": [
            "R",
            "recursive"
          ],
          "paths": [
            {
              "regex": "^(?:/|/\\*|~|~/\\*|/(?:bin|boot|dev|etc|lib|lib32|lib64|proc|root|sbin|sys|usr|var|System|Library)(?:/.*)?|/(?:home|Users|opt|srv|Applications)(?:/[^/]*)?)$"
            }
          ]
        }
      },
      "action": {
        "decision": "block",
        "reason": "Recursive permission change of the root, home or a system directory"
      }
    },
    {
      "id": "block-system-file-write",
      "description": "Writing, truncating, deleting or changing the mode of a system file (truncate -s 0 /etc/passwd, > /etc/hosts, tee /etc/sudoers, sed -i ... /etc/ssh/sshd_config, cp x /usr/bin/ls).",
      "events": "pre_action",
      "match": {
        "shell": {
          "writes": {
            "regex": "^/(?:etc|boot|bin|sbin|lib|lib32|lib64|usr/(?:bin|sbin|lib|lib32|lib64|libexec)|System)(?:/|$)"
          }
        }
      },
      "action": {
        "decision": "block",
        "reason": "Write to a system file"
      }
    },
    {
      "id": "block-mkfs",
      "description": "Formatting a filesystem (mkfs, mkfs.ext4, mke2fs, mkswap, newfs).",
      "events": "pre_action",
      "match": {
        "shell": {
          "program": [
            "mkfs",
            "mkfs.*",
            "mke2fs",
            "mkswap",
            "newfs",
            "newfs_*"
          ]
        }
      },
      "action": {
        "decision": "block",
        "reason": "Filesystem format"
      }
    },
    {
      "id": "block-fork-bomb",
      "description": "Fork bombs such as :(){ :|:& };:",
      "events": "pre_action",
      "match": {
        "shell": {
          "line": {
            "contains": "()",
            "regex": "(?:^|[^A-Za-z0-9_:])([A-Za-z_:][A-Za-z0-9_:]{0,63})\\s{0,16}\\(\\)\\s{0,16}\\{[^}]{0,256}?\\1\\s{0,16}\\|\\s{0,16}\\1\\s{0,16}&"
          }
        }
      },
      "action": {
        "decision": "block",
        "reason": "Fork bomb"
      }
    },
    {
      "id": "block-pipe-to-shell",
      "description": "Downloading a script and piping it into a shell (curl ... | sh, wget -qO- ... | bash, bash <(curl ...), sh -c \"$(curl ...)\").",
      "events": "pre_action",
      "match": {
        "shell": {
          "program": [
            "curl",
            "wget",
            "fetch",
            "aria2c",
            "http",
            "https",
            "xh"
          ],
          "piped_to": [
            "sh",
            "bash",
            "zsh",
            "dash",
            "ksh",
            "mksh",
            "ash",
            "fish",
            "csh",
            "tcsh",
            "eval",
            "source",
            "."
          ]
        }
      },
      "action": {
        "decision": "block",
        "reason": "Downloaded script piped into a shell"
      }
    },
    {
      "id": "block-write-outside-workspace",
      "description": "A write/edit tool whose path resolves outside the workspace (settings.workspace_root, else payload.working_directory / context.capabilities.workspace); `..` traversal included.",
      "events": "pre_action",
      "match": {
        "tool": [
          "write",
          "write_file",
          "*__write_file",
          "edit",
          "edit_file",
          "*__edit_file",
          "multi_edit",
          "multiedit",
          "str_replace*",
          "create_file",
          "apply_patch",
          "append_file",
          "notebook_edit",
          "notebookedit",
          "delete_file",
          "*__delete_file",
          "move_file",
          "*__move_file",
          "create_directory",
          "*__create_directory"
        ],
        "path": {
          "outside_workspace": true
        }
      },
      "action": {
        "decision": "block",
        "reason": "Write outside the workspace"
      }
    },
    {
      "id": "block-credential-exfiltration",
      "description": "A credential file (~/.ssh/id_*, ~/.aws/credentials, .env, .netrc, ...) handed to or piped into a network client.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "program": [
                "curl",
                "wget",
                "nc",
                "ncat",
                "netcat",
                "socat",
                "telnet",
                "ftp",
                "tftp",
                "http",
                "https",
                "xh",
                "scp",
                "sftp",
                "rsync",
                "rclone"
              ],
              "word": {
                "regex": "(?:\\.ssh/id_[A-Za-z0-9_-]+|\\.aws/credentials|\\.netrc|\\.git-credentials|\\.docker/config\\.json|\\.kube/config|\\.pgpass|\\.npmrc|\\.pypirc)$|(?:^|[/=@])\\.env(?:\\.(?!(?:example|sample|template|dist)$)[A-Za-z0-9_-]+)?$"
              }
            }
          },
          {
            "shell": {
              "word": {
                "regex": "(?:\\.ssh/id_[A-Za-z0-9_-]+|\\.aws/credentials|\\.netrc|\\.git-credentials|\\.docker/config\\.json|\\.kube/config|\\.pgpass|\\.npmrc|\\.pypirc)$|(?:^|[/=@])\\.env(?:\\.(?!(?:example|sample|template|dist)$)[A-Za-z0-9_-]+)?$"
              },
              "piped_to": [
                "curl",
                "wget",
                "nc",
                "ncat",
                "netcat",
                "socat",
                "telnet",
                "ssh",
                "ftp",
                "tftp",
                "http",
                "https",
                "xh"
              ]
            }
          }
        ]
      },
      "action": {
        "decision": "block",
        "reason": "Credential file sent over the network"
      }
    },
    {
      "id": "block-secrets-in-outgoing-requests",
      "description": "A secret (API key, token, private key, password) in the arguments of a network tool or of a shell command that runs a network client.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "tool": [
              "*fetch*",
              "http*",
              "*request*",
              "*webhook*",
              "*upload*",
              "send*",
              "*_send*",
              "*email*",
              "*slack*",
              "post_*"
            ],
            "secrets": {
              "fields": [
                "payload.arguments",
                "payload.input"
              ]
            }
          },
          {
            "shell": {
              "program": [
                "curl",
                "wget",
                "nc",
                "ncat",
                "netcat",
                "socat",
                "telnet",
                "ftp",
                "http",
                "https",
                "xh"
              ]
            },
            "secrets": {
              "fields": [
                "payload.arguments",
                "payload.tool_input",
                "payload.input",
                "payload.params",
                "payload.command"
              ]
            }
          }
        ]
      },
      "action": {
        "decision": "block",
        "reason": "Secret in an outgoing request"
      }
    },
    {
      "id": "escalate-unanalysable-shell",
      "description": "A command the policy cannot analyse statically - a computed command word ($(echo rm) -rf /, $CMD), eval, generated text run by a shell or an interpreter (... | base64 -d | sh, curl ... | python3), interpreter one-liners calling delete/exec/network primitives (python3 -c \"import shutil; ...\", perl -e 'system(...)'), or a line longer than the analysis limit.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "opaque": true
            }
          },
          {
            "shell": {
              "program": "eval"
            }
          }
        ]
      },
      "action": {
        "decision": "escalate",
        "reason": "Command cannot be analysed statically; needs approval",
        "escalation_target": "security"
      }
    },
    {
      "id": "escalate-shell-without-command",
      "description": "A shell tool (by name, ACP kind execute, OpenAI shell call) whose command text cannot be found in the payload.",
      "events": "pre_action",
      "match": {
        "tool_call": {
          "shell": true,
          "command": false
        }
      },
      "action": {
        "decision": "escalate",
        "reason": "Shell tool call without a command the policy can read",
        "escalation_target": "security"
      }
    },
    {
      "id": "escalate-unnamed-action",
      "description": "A pre_action whose payload names no tool in any known shape ({}, [1], a bare string).",
      "events": "pre_action",
      "match": {
        "tool_call": {
          "named": false
        }
      },
      "action": {
        "decision": "escalate",
        "reason": "Action names no tool; needs approval",
        "escalation_target": "security"
      }
    },
    {
      "id": "escalate-unknown-package-source",
      "description": "Package installs from an unknown registry or index, from a URL or VCS, or a downloaded install script that is then run.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "program": [
                "npm",
                "pnpm",
                "yarn",
                "npx",
                "bun",
                "bunx"
              ],
              "option": {
                "name": "registry",
                "value": {
                  "not": {
                    "glob": [
                      "https://registry.npmjs.org",
                      "https://registry.npmjs.org/**",
                      "https://registry.yarnpkg.com",
                      "https://registry.yarnpkg.com/**"
                    ]
                  }
                }
              }
            }
          },
          {
            "shell": {
              "program": [
                "npm",
                "pnpm",
                "yarn"
              ],
              "args": [
                {
                  "equals": "config"
                },
                {
                  "equals": "set"
                },
                {
                  "glob": "*registry*"
                }
              ]
            }
          },
          {
            "shell": {
              "program": [
                "npm",
                "pnpm",
                "yarn",
                "bun"
              ],
              "args": [
                {
                  "one_of": [
                    "install",
                    "i",
                    "add"
                  ]
                },
                {
                  "regex": "^(git\\+|git://|github:|gitlab:|bitbucket:|https?://)"
                }
              ]
            }
          },
          {
            "shell": {
              "program": [
                "pip",
                "pip3",
                "pip3.*",
                "uv",
                "pipx",
                "poetry"
              ],
              "option": {
                "name": [
                  "index-url",
                  "extra-index-url",
                  "i",
                  "index",
                  "trusted-host"
                ],
                "value": {
                  "not": {
                    "glob": [
                      "https://pypi.org/simple",
                      "https://pypi.org/simple/"
                    ]
                  }
                }
              }
            }
          },
          {
            "shell": {
              "program": [
                "pip",
                "pip3",
                "pip3.*",
                "uv",
                "pipx"
              ],
              "args": [
                {
                  "equals": "install"
                },
                {
                  "regex": "^(git\\+|hg\\+|svn\\+|bzr\\+|https?://|ftp://)"
                }
              ]
            }
          },
          {
            "all": [
              {
                "shell": {
                  "program": [
                    "curl",
                    "wget"
                  ],
                  "word": {
                    "regex": "\\.(sh|bash|zsh|ps1|py|pl|rb)$"
                  }
                }
              },
              {
                "shell": {
                  "program": [
                    "sh",
                    "bash",
                    "zsh",
                    "dash",
                    "ksh",
                    "source",
                    ".",
                    "*.sh"
                  ]
                }
              }
            ]
          }
        ]
      },
      "action": {
        "decision": "escalate",
        "reason": "Install from an unknown source needs approval",
        "escalation_target": "security"
      }
    },
    {
      "id": "escalate-protected-branch-push",
      "description": "git push to main/master (also HEAD:main, refs/heads/main) and force pushes.",
      "events": "pre_action",
      "match": {
        "any": [
          {
            "shell": {
              "program": "git",
              "args": [
                {
                  "equals": "push"
                },
                {
                  "regex": "^\\+?(refs/heads/)?(main|master)$|:(refs/heads/)?(main|master)$"
                }
              ]
            }
          },
          {
            "shell": {
              "program": "git",
              "args": [
                {
                  "equals": "push"
                }
              ],
              "flags_any": [
                "force",
                "f",
                "force-with-lease",
                "force-if-includes",
                "mirror"
              ]
            }
          },
          {
            "shell": {
              "program": "git",
              "args": [
                {
                  "equals": "push"
                },
                {
                  "regex": "^\\+"
                }
              ]
            }
          }
        ]
      },
      "action": {
        "decision": "escalate",
        "reason": "Push to a protected branch or force push needs approval",
        "escalation_target": "maintainers"
      }
    },
    {
      "id": "redact-secrets-in-prompts",
      "description": "Secrets in a prompt are replaced by [REDACTED:<kind>] before it reaches the model.",
      "events": "pre_prompt",
      "match": {
        "secrets": {}
      },
      "action": {
        "decision": "modify",
        "redact_secrets": true
      }
    },
    {
      "id": "redact-secrets-in-tool-results",
      "description": "Secrets in tool results (post_action in a batch) are replaced by [REDACTED:<kind>]; as notifications they are reported to onDecision.",
      "events": "post_action",
      "match": {
        "secrets": {}
      },
      "action": {
        "decision": "modify",
        "redact_secrets": true
      }
    }
  ]
};
