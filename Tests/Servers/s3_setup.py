"""Prepares the moto S3 server the tests use: an IAM user whose SigV4 signatures moto checks,
and a bucket. Prints `ACCESS_KEY SECRET_KEY`.

    python3 Tests/Servers/s3_setup.py http://127.0.0.1:9000 derive-test
"""
import json, sys
import boto3

endpoint, bucket = sys.argv[1], sys.argv[2]
options = dict(endpoint_url=endpoint, region_name="us-east-1")
iam = boto3.client("iam", aws_access_key_id="setup", aws_secret_access_key="setup", **options)
iam.create_user(UserName="derive")
key = iam.create_access_key(UserName="derive")["AccessKey"]
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_user_policy(UserName="derive", PolicyName="derive-s3", PolicyDocument=json.dumps(policy))
s3 = boto3.client("s3", aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"], **options)
s3.create_bucket(Bucket=bucket)
print(key["AccessKeyId"], key["SecretAccessKey"])
