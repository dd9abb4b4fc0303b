module github.com/cachegate/cachegate

go 1.26.0
