// Pulumi provider for the Cloud Infrastructure Management API
package cloudinfra
