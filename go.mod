module github.com/ssnmf/ssnmf

go 1.26.0

require (
	github.com/apache/arrow-go/v18 v18.8.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
