import { IntegrationRepositoryPg } from "./IntegrationRepositoryPg.ts"

/** The integrations context's ports on Postgres. */
export const IntegrationsPg = {
  layer: IntegrationRepositoryPg.layer
}
