// Command palace is the one binary: its subcommands parse flags and call
// host. It holds no logic of its own beyond presenting results.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
