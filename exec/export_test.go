package exec

// ScanTestTable is scanTestTable for the external tests of the package.
var ScanTestTable = scanTestTable
