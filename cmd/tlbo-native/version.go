package main

import (
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"

	// Also what links tcmalloc into the program (TestAllocator checks it).
	"github.com/tlbo-native/tlbo-native/internal/malloc"
	"github.com/tlbo-native/tlbo-native/torch"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the Go and libtorch versions, CUDA support, threads, the denormal mode and the C allocator",
		Action: func(c *cli.Context) error {
			tv, err := torch.Version()
			if err != nil {
				return err
			}
			fmt.Printf("go %s\n", runtime.Version())
			fmt.Printf("libtorch %s\n", tv)
			fmt.Printf("cuda_compiled %t\n", torch.CUDACompiled())
			fmt.Printf("cuda_available %t\n", torch.CUDAAvailable())
			fmt.Printf("cuda_devices %d\n", torch.CUDADeviceCount())
			fmt.Printf("threads %d\n", torch.NumThreads())
			fmt.Printf("flush_denormal %t\n", torch.FlushDenormal())
			fmt.Printf("malloc %s\n", malloc.Allocator())
			return nil
		},
	}
}
